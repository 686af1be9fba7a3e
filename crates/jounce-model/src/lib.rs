//! # jounce-model: the declarative model a user writes
//!
//! Owns the model file format (TOML, SI units; see `docs/model-format.md`),
//! its validation, and the validated [`Model`] handed to the mechanics
//! layer. Errors name the file, the line and the element. Must not evaluate
//! dynamics.
//!
//! Entry points: [`load_file`] and [`from_str`], both returning
//! `Result<Model, ModelError>`. A `.urdf` file, or a TOML file's
//! `[model] urdf = "..."`, is a URDF robot description read as a spatial
//! model ([`urdf`]).
//!
//! ```
//! let text = r#"
//! [[bodies]]
//! name = "pendulum"
//! mass = 1.0
//! inertia = 0.01
//! position = [0.5, 0.0]
//!
//! [[joints]]
//! name = "pivot"
//! type = "revolute"
//! body1 = "ground"
//! point1 = [0.0, 0.0]
//! body2 = "pendulum"
//! point2 = [-0.5, 0.0]
//! "#;
//! let model = jounce_model::from_str(text, "pendulum.toml").unwrap();
//! assert_eq!(model.bodies[0].name, "pendulum");
//!
//! let bad = text.replace("mass = 1.0", "mass = -1");
//! let err = jounce_model::from_str(&bad, "pendulum.toml").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "pendulum.toml:4: body 'pendulum': mass must be positive, got -1"
//! );
//! assert_eq!(err.line(), Some(4));
//! ```

mod beam;
mod breakpoints;
mod connections;
mod contacts;
pub mod error;
mod forces;
mod friction;
mod functions;
mod parse;
mod reader;
mod settings;
pub mod spatial;
mod spatial_parse;
pub mod table;
pub mod time_function;
pub mod types;
pub mod urdf;

pub use beam::{beam_stiffness_problem, Beam, DEFAULT_BEAM_DAMPING};
pub use error::{did_you_mean, Location, ModelError};
pub use friction::DEFAULT_FRICTION_VELOCITY;
pub use parse::{from_str, load_file, GROUND};
pub use settings::{atol_problem, rtol_problem, t_end_problem, T_END_MIN};
pub use spatial::{
    rotation_matrix, Space, SpatialAttachment, SpatialBody, SpatialContactGeometry, SpatialDriver,
    SpatialForce, SpatialForceKind, SpatialFrame, SpatialJoint, SpatialJointKind, SpatialModel,
};
pub use table::{Interpolation, Table, TableError};
pub use time_function::TimeFunction;
pub use types::*;
