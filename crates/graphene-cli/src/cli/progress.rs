//! Progress bars on standard error, shown only when it is a terminal and the run is not
//! `--quiet`: a long run says how far it is, while pipes, logs and tests see nothing of it.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps drawn with `template` (indicatif's syntax; `{bar:30}` and friends), or
/// None when nothing should be drawn.
pub fn bar(len: u64, template: &str, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::new(len);
    b.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(b)
}
