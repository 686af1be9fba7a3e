//! The `jounce` command.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// jounce: planar multibody dynamics — which formulation and which
/// integrator make this model fast and right.
#[derive(Parser)]
#[command(name = "jounce", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every integrator with order, stability and source.
    Methods {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Methods { json } => {
            if json {
                println!("{}", jounce::methods_table::methods_json());
            } else {
                print!("{}", jounce::methods_table::methods_table());
            }
            ExitCode::SUCCESS
        }
    }
}
