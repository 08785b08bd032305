//! What every chart shares: size, fonts, colours, the side legend and the provenance note.
//!
//! Every chart is a plotting area on the left, a legend panel on the right and one line at the
//! bottom saying which command and seed made the figure, so that a figure copied out of its
//! document still says where it came from.

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};

pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 720;
const LEGEND_WIDTH: u32 = 280;
const NOTE_HEIGHT: u32 = 46;
/// Characters of the 13 px note that fit in one line of the chart's width (about 6.5 px each).
const NOTE_CHARS: usize = 170;
pub const FONT: &str = "sans-serif";
/// Grid lines: faint enough that bars and series stay in front.
pub const LIGHT: RGBColor = RGBColor(242, 242, 242);
pub const BOLD: RGBColor = RGBColor(215, 215, 215);

pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Colour `i` of a cycle of 20 distinguishable colours (Palette99 without its black, which
/// marks troublesome tasks and lower bounds).
pub fn color(i: usize) -> RGBColor {
    let c = Palette99::COLORS[i % 20];
    RGBColor(c.0, c.1, c.2)
}

/// The grid, tick labels and axis descriptions every chart draws the same way; the caller adds
/// what is particular to it (label formatters) and calls `draw`.
pub fn mesh<'a, 'b, DB, XT, YT, X, Y>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut m = chart.configure_mesh();
    m.light_line_style(LIGHT)
        .bold_line_style(BOLD)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .x_desc(x_desc)
        .y_desc(y_desc);
    m
}

/// Any plotters failure, as the library's error type.
pub fn draw_err<E: std::fmt::Display>(e: E) -> Error {
    Error::Usage(format!("cannot draw the chart: {e}"))
}

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug)]
pub enum Mark {
    Box(RGBColor),
    Outline(RGBColor),
    Line(RGBColor),
}

pub struct Legend {
    pub title: String,
    pub entries: Vec<(String, Mark)>,
}

/// Renders `draw` into an SVG document of the standard size: `draw` gets the plotting area,
/// then the legend and the `note` line are drawn beside and below it.
pub fn render(note: &str, draw: impl FnOnce(&Area) -> Result<Legend>) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let (body, foot) = root.split_vertically(HEIGHT - NOTE_HEIGHT);
        let (plot, side) = body.split_horizontally(WIDTH - LEGEND_WIDTH);
        let legend = draw(&plot)?;
        draw_legend(&side, &legend)?;
        let style = TextStyle::from((FONT, 13).into_font()).color(&RGBColor(80, 80, 80));
        for (i, line) in wrap(note, NOTE_CHARS).iter().enumerate() {
            foot.draw_text(line, &style, (12, 4 + 18 * i as i32)).map_err(draw_err)?;
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// `text` split at spaces into lines of at most `width` characters (a longer word stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.retain(|l| !l.is_empty());
    lines
}

fn draw_legend(area: &Area, legend: &Legend) -> Result<()> {
    let title = TextStyle::from((FONT, 16).into_font().style(FontStyle::Bold));
    area.draw_text(&legend.title, &title, (8, 40)).map_err(draw_err)?;
    let text = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let (_, h) = area.dim_in_pixel();
    let row = 22;
    let max_rows = ((h as i32 - 90) / row).max(1) as usize;
    for (i, (label, mark)) in legend.entries.iter().take(max_rows).enumerate() {
        let y = 75 + i as i32 * row;
        match *mark {
            Mark::Box(c) => area.draw(&Rectangle::new([(8, y - 7), (30, y + 7)], c.filled())),
            Mark::Outline(c) => area.draw(&Rectangle::new([(8, y - 7), (30, y + 7)], c.stroke_width(2))),
            Mark::Line(c) => area.draw(&PathElement::new(vec![(6, y), (32, y)], c.stroke_width(3))),
        }
        .map_err(draw_err)?;
        area.draw_text(label, &text, (40, y)).map_err(draw_err)?;
    }
    if legend.entries.len() > max_rows {
        let y = 75 + max_rows as i32 * row;
        let more = format!("... {} more", legend.entries.len() - max_rows);
        area.draw_text(&more, &text, (40, y)).map_err(draw_err)?;
    }
    Ok(())
}

/// `v` rounded up to a readable axis end (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten).
pub fn nice_max(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || v.is_infinite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if v <= m * p + 1e-12 {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_max_rounds_up_to_a_readable_value() {
        assert_eq!(nice_max(50.5), 60.0);
        assert_eq!(nice_max(0.7), 0.8);
        assert_eq!(nice_max(1000.0), 1000.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(f64::NAN), 1.0);
    }

    #[test]
    fn notes_wrap_at_spaces() {
        assert_eq!(wrap("ab cd ef", 5), vec!["ab cd", "ef"]);
        assert_eq!(wrap("abcdefg hi", 5), vec!["abcdefg", "hi"]);
        assert!(wrap("", 5).is_empty());
    }

    #[test]
    fn colours_cycle_without_black() {
        assert_eq!(color(0), color(20));
        assert!((0..20).all(|i| color(i) != RGBColor(0, 0, 0)));
    }
}
