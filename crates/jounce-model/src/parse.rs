//! The model file: top-level sections, `[model]`, `[ground]`, `[[bodies]]`,
//! and the resolution of body and point references. Joints and drivers are
//! in `connections.rs`, forces in `forces.rs`, run settings in
//! `settings.rs`, time functions in `functions.rs`.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::error::ModelError;
use crate::functions::Functions;
use crate::reader::{table_array, Elem, Src};
use crate::spatial::Space;
use crate::types::{Attachment, Body, BodyRef, Model};

/// Reserved name of the fixed frame.
pub const GROUND: &str = "ground";

const TOP_KEYS: &[&str] = &[
    "model",
    "ground",
    "functions",
    "bodies",
    "joints",
    "contacts",
    "drivers",
    "forces",
    "settings",
];

/// Everything resolved so far, shared by the element parsers.
pub(crate) struct Ctx<'a, 'i> {
    pub src: Src<'a>,
    pub ground_points: Vec<(String, [f64; 2])>,
    pub bodies: Vec<Body>,
    pub functions: Functions<'a, 'i>,
}

/// An element of an array of tables with its name already read.
pub(crate) struct Named<'a, 'i> {
    pub elem: Elem<'a, 'i>,
    pub name: String,
    pub name_span: Range<usize>,
}

/// Reads the `name` of every element of `[[key]]` (labelled `kind 'name'`).
pub(crate) fn named_elements<'a, 'i>(
    src: Src<'a>,
    root: &'a DeTable<'i>,
    key: &str,
    kind: &str,
) -> Result<Vec<Named<'a, 'i>>, ModelError> {
    let Some(v) = root.get(key) else {
        return Ok(Vec::new());
    };
    let items = table_array(src, key, v)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut elem = Elem::new(src, format!("{kind} #{}", i + 1), item, key)?;
        let name = elem.req_str("name")?.to_string();
        let name_span = elem.value_span("name");
        if name.trim().is_empty() {
            return Err(elem.invalid("name", &name_span, "must not be empty"));
        }
        elem.label = format!("{kind} '{name}'");
        out.push(Named {
            elem,
            name,
            name_span,
        });
    }
    Ok(out)
}

/// Rejects a name used twice among `items` (in file order).
pub(crate) fn check_unique(
    src: Src<'_>,
    kind: &str,
    items: &[&Named<'_, '_>],
) -> Result<(), ModelError> {
    let mut sorted: Vec<&&Named> = items.iter().collect();
    sorted.sort_by_key(|n| n.name_span.start);
    // the first occurrence's byte offset; its line is counted only for the
    // error (counting it per name made the check O(n × file length))
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(sorted.len());
    for n in sorted {
        if let Some(&first) = seen.get(n.name.as_str()) {
            return Err(ModelError::DuplicateName {
                at: n.elem.at(&n.name_span),
                kind: kind.to_string(),
                name: n.name.clone(),
                first_line: src.line(first),
            });
        }
        seen.insert(&n.name, n.name_span.start);
    }
    Ok(())
}

/// Reads a model file: TOML, or a URDF robot description when the name
/// ends in `.urdf` (any case; see [`crate::urdf`]).
pub fn load_file(path: &Path) -> Result<Model, ModelError> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("urdf"))
    {
        return crate::urdf::load_urdf_file(path);
    }
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::Io {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    from_str(&text, &origin)
}

/// Parses and validates a model from TOML text; `origin` names the source
/// (file path) in error messages and in [`Model::source`].
pub fn from_str(text: &str, origin: &str) -> Result<Model, ModelError> {
    let src = Src { origin, text };
    let doc = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let line = src.line(span.start);
        let mut message = e.message().trim().to_string();
        let snippet = text.get(span.clone()).unwrap_or("").trim();
        if !snippet.is_empty() && snippet.len() <= 40 && !snippet.contains('\n') {
            message = format!("{message} at '{snippet}'");
        }
        ModelError::Syntax {
            at: src.loc(&span, &src.section_at(line)),
            message,
        }
    })?;
    let root_span = doc.span();
    let root: &DeTable = doc.get_ref();
    let top = Elem {
        src,
        label: "top level".into(),
        span: root_span,
        table: root,
        prefix: String::new(),
    };
    // [model]
    let default_name = Path::new(origin)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let model_elem = root
        .get("model")
        .map(|v| Elem::new(src, "[model]", v, "model"))
        .transpose()?;
    let space = match &model_elem {
        Some(e) => match e.choice("space", "space", &["planar", "spatial"])? {
            Some(1) => Space::Spatial,
            _ => Space::Planar,
        },
        None => Space::Planar,
    };
    if let Some(e) = model_elem.as_ref().filter(|e| e.get("urdf").is_some()) {
        return urdf_model(src, root, &top, e, space);
    }
    if space == Space::Spatial {
        return spatial_model(src, root, &top, model_elem.as_ref(), default_name);
    }
    top.check_keys(TOP_KEYS)?;
    let (name, gravity) = match model_elem {
        Some(e) => {
            e.check_keys(&["name", "gravity", "space", "urdf"])?;
            (
                e.opt_str("name")?
                    .map(str::to_string)
                    .unwrap_or(default_name),
                e.vec2_or("gravity", [0.0, -9.81])?,
            )
        }
        None => (default_name, [0.0, -9.81]),
    };

    // [ground]
    let ground_points = match root.get(GROUND) {
        Some(v) => {
            let e = Elem::new(src, "ground", v, GROUND)?;
            e.check_keys(&["points"])?;
            points(&e)?
        }
        None => Vec::new(),
    };

    // [functions]
    let mut functions = Functions::new(src, root.get("functions"))?;
    functions.compile_all()?;

    // [[bodies]]
    let body_elems = named_elements(src, root, "bodies", "body")?;
    check_unique(src, "body", &body_elems.iter().collect::<Vec<_>>())?;
    let mut bodies = Vec::with_capacity(body_elems.len());
    for b in &body_elems {
        bodies.push(body(b)?);
    }

    let mut ctx = Ctx {
        src,
        ground_points,
        bodies,
        functions,
    };
    let (joints, drivers) = crate::connections::parse(&mut ctx, root)?;
    let mut forces = crate::forces::parse(&mut ctx, root, &joints)?;
    forces.extend(crate::contacts::parse(&mut ctx, root, &forces)?);
    let settings = crate::settings::parse(src, root.get("settings"))?;

    Ok(Model {
        name,
        source: origin.to_string(),
        gravity,
        bodies: ctx.bodies,
        joints,
        drivers,
        forces,
        settings,
        spatial: None,
    })
}

/// A spatial model (`[model] space = "spatial"`): the planar lists stay
/// empty, [`Model::spatial`] holds the bodies, joints and forces. Gravity
/// defaults to 9.81 m/s² along −z.
fn spatial_model(
    src: Src<'_>,
    root: &DeTable<'_>,
    top: &Elem<'_, '_>,
    model_elem: Option<&Elem<'_, '_>>,
    default_name: String,
) -> Result<Model, ModelError> {
    top.check_keys(crate::spatial_parse::SPATIAL_TOP_KEYS)?;
    let (name, gravity) = match model_elem {
        Some(e) => {
            e.check_keys(&["name", "gravity", "space", "urdf"])?;
            let gravity = match e.get("gravity") {
                Some(v) => e.vecn("gravity", v, "[gx, gy, gz]")?,
                None => [0.0, 0.0, -9.81],
            };
            (
                e.opt_str("name")?
                    .map(str::to_string)
                    .unwrap_or(default_name),
                gravity,
            )
        }
        None => (default_name, [0.0, 0.0, -9.81]),
    };
    let spatial = crate::spatial_parse::parse(src, root, gravity)?;
    let settings = crate::settings::parse(src, root.get("settings"))?;
    Ok(Model {
        name,
        source: src.origin.to_string(),
        gravity: [0.0, 0.0],
        bodies: Vec::new(),
        joints: Vec::new(),
        drivers: Vec::new(),
        forces: Vec::new(),
        settings,
        spatial: Some(spatial),
    })
}

/// A TOML file that includes a URDF robot description (`[model] urdf =
/// "arm.urdf"`, relative to the TOML file): the robot's spatial model with
/// this file's `[model] name`, `gravity`, `[settings]`, and `[[drivers]]`
/// (with `[functions]`) on the URDF's joints.
fn urdf_model(
    src: Src<'_>,
    root: &DeTable<'_>,
    top: &Elem<'_, '_>,
    e: &Elem<'_, '_>,
    space: Space,
) -> Result<Model, ModelError> {
    top.check_keys(&["model", "settings", "functions", "drivers"])?;
    e.check_keys(&["name", "gravity", "space", "urdf"])?;
    if space == Space::Planar && e.get("space").is_some() {
        return Err(e.invalid(
            "space",
            &e.value_span("space"),
            "must be \"spatial\" (or left out) with `urdf`: a URDF robot is spatial",
        ));
    }
    let v = e.req("urdf")?;
    let rel = e.string("urdf", v)?;
    if rel.trim().is_empty() {
        return Err(e.invalid("urdf", &v.span(), "must name a .urdf file"));
    }
    let path = Path::new(src.origin)
        .parent()
        .unwrap_or(Path::new(""))
        .join(rel);
    let text = std::fs::read_to_string(&path).map_err(|err| {
        e.invalid(
            "urdf",
            &v.span(),
            format!("cannot read URDF file '{}': {err}", path.display()),
        )
    })?;
    let gravity = match e.get("gravity") {
        Some(g) => e.vecn("gravity", g, "[gx, gy, gz]")?,
        None => crate::urdf::URDF_GRAVITY,
    };
    let (robot_name, mut spatial) =
        crate::urdf::spatial_from_urdf(&text, &path.display().to_string(), gravity)?;
    spatial.drivers = crate::spatial_parse::urdf_drivers(
        src,
        root,
        &spatial.joints,
        &crate::urdf::joint_types(&text),
    )?;
    let name = match e.opt_str("name")? {
        Some(n) => n.to_string(),
        None => robot_name.unwrap_or_else(|| {
            Path::new(src.origin)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "model".into())
        }),
    };
    let settings = crate::settings::parse(src, root.get("settings"))?;
    Ok(crate::urdf::spatial_model(
        name,
        src.origin.to_string(),
        spatial,
        settings,
    ))
}

/// `points = { name = [x, y], ... }` in file order.
fn points(e: &Elem<'_, '_>) -> Result<Vec<(String, [f64; 2])>, ModelError> {
    let Some(v) = e.get("points") else {
        return Ok(Vec::new());
    };
    let pe = e.nested("points", v)?;
    let mut entries: Vec<_> = pe.table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::with_capacity(entries.len());
    for (k, pv) in entries {
        let name: &str = k.get_ref();
        if name.trim().is_empty() {
            return Err(pe.invalid("points", &k.span(), "point names must not be empty"));
        }
        out.push((name.to_string(), pe.vec2(name, pv)?));
    }
    Ok(out)
}

fn body(n: &Named<'_, '_>) -> Result<Body, ModelError> {
    let e = &n.elem;
    e.check_keys(&[
        "name",
        "mass",
        "inertia",
        "position",
        "angle",
        "velocity",
        "angular_velocity",
        "points",
    ])?;
    if n.name == GROUND {
        return Err(e.invalid(
            "name",
            &n.name_span,
            "'ground' is reserved for the fixed frame; use a [ground] table for its points",
        ));
    }
    let mass = e.req_num("mass")?;
    let inertia = e.req_num("inertia")?;
    Ok(Body {
        name: n.name.clone(),
        mass: e.positive("mass", mass)?,
        inertia: e.non_negative("inertia", inertia)?,
        position: e.vec2_or("position", [0.0, 0.0])?,
        angle: e.num_or("angle", 0.0)?,
        velocity: e.vec2_or("velocity", [0.0, 0.0])?,
        angular_velocity: e.num_or("angular_velocity", 0.0)?,
        points: points(e)?,
    })
}

/// The point called `name` in `list` (a body's or the ground's named
/// points, `body` its name), or an error at `span` that names the points
/// there are.
pub(crate) fn named_point<P: Copy>(
    e: &Elem<'_, '_>,
    span: &std::ops::Range<usize>,
    name: &str,
    list: &[(String, P)],
    body: &str,
) -> Result<P, ModelError> {
    match list.iter().find(|(n, _)| n == name) {
        Some((_, p)) => Ok(*p),
        None => Err(ModelError::UnknownReference {
            at: e.at(span),
            kind: "point".into(),
            name: name.to_string(),
            scope: format!(" on body '{body}'"),
            available: list.iter().map(|(n, _)| n.clone()).collect(),
        }),
    }
}

/// The body named by `key` of element `e` ("ground" or one of `names`,
/// the model's bodies in order), or an error that names the element, the
/// key and the bodies there are.
pub(crate) fn body_ref_among<'n>(
    e: &Elem<'_, '_>,
    key: &str,
    names: impl Iterator<Item = &'n str> + Clone,
) -> Result<BodyRef, ModelError> {
    let v = e.req(key)?;
    let name = e.string(key, v)?;
    if name == GROUND {
        return Ok(BodyRef::Ground);
    }
    match names.clone().position(|b| b == name) {
        Some(i) => Ok(BodyRef::Body(i)),
        None => Err(ModelError::UnknownReference {
            at: e.at(&v.span()),
            kind: "body".into(),
            name: name.to_string(),
            scope: String::new(),
            available: std::iter::once(GROUND.to_string())
                .chain(names.map(str::to_string))
                .collect(),
        }),
    }
}

impl<'a, 'i> Ctx<'a, 'i> {
    /// Resolves the body named by `key` ("ground" or a body name).
    pub fn body_ref(&self, e: &Elem<'a, 'i>, key: &str) -> Result<BodyRef, ModelError> {
        body_ref_among(e, key, self.bodies.iter().map(|b| b.name.as_str()))
    }

    /// Resolves a moving body (not ground) named by `key`.
    pub fn moving_body(&self, e: &Elem<'a, 'i>, key: &str) -> Result<usize, ModelError> {
        match self.body_ref(e, key)? {
            BodyRef::Body(i) => Ok(i),
            BodyRef::Ground => Err(e.invalid(
                key,
                &e.value_span(key),
                "must be a moving body, not 'ground' (a load on ground has no effect)",
            )),
        }
    }

    fn body_name(&self, b: BodyRef) -> &str {
        match b {
            BodyRef::Ground => GROUND,
            BodyRef::Body(i) => &self.bodies[i].name,
        }
    }

    /// Reads an attachment: body `body_key` and point `point_key`, the point
    /// being a named point of that body or an inline `[x, y]` in its frame.
    pub fn attachment(
        &self,
        e: &Elem<'a, 'i>,
        body_key: &str,
        point_key: &str,
    ) -> Result<Attachment, ModelError> {
        let body = self.body_ref(e, body_key)?;
        let v = e.req(point_key)?;
        let point = match v.get_ref() {
            DeValue::String(name) => {
                let list = match body {
                    BodyRef::Ground => &self.ground_points,
                    BodyRef::Body(i) => &self.bodies[i].points,
                };
                named_point(e, &v.span(), name, list, self.body_name(body))?
            }
            DeValue::Array(_) => e.vec2(point_key, v)?,
            _ => return Err(e.wrong_type(point_key, v, "a point name or an array [x, y]")),
        };
        Ok(Attachment { body, point })
    }

    /// Rejects two attachments (or bodies) on the same body.
    pub fn distinct(
        &self,
        e: &Elem<'a, 'i>,
        key: &str,
        a: BodyRef,
        b: BodyRef,
    ) -> Result<(), ModelError> {
        if a == b {
            return Err(ModelError::Invalid {
                at: e.at(&e.value_span(key)),
                message: format!("connects body '{}' to itself", self.body_name(a)),
            });
        }
        Ok(())
    }

    /// Compiles an optional time function at `key`.
    pub fn opt_function(
        &mut self,
        e: &Elem<'a, 'i>,
        key: &str,
    ) -> Result<Option<crate::TimeFunction>, ModelError> {
        match e.get(key) {
            Some(v) => Ok(Some(self.functions.parse(&e.label, &e.path(key), v)?)),
            None => Ok(None),
        }
    }

    /// Compiles a required time function at `key`.
    pub fn function(
        &mut self,
        e: &Elem<'a, 'i>,
        key: &str,
    ) -> Result<crate::TimeFunction, ModelError> {
        let v = e.req(key)?;
        self.functions.parse(&e.label, &e.path(key), v)
    }
}
