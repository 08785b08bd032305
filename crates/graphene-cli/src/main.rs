//! The `graphene` command: a thin layer of flags over the library.

mod cli;

fn main() {
    std::process::exit(cli::run());
}
