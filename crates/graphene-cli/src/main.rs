//! The `graphene` command: a thin layer of flags over the library.

fn main() {
    std::process::exit(graphene_cli::run());
}
