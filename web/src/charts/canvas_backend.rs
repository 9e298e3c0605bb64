//! The canvas backend the page's charts draw on: plotters' canvas backend,
//! with text measured by the canvas itself (`measureText`). Plotters' own web
//! text measurement appends a span to the page and reads its size, forcing
//! the browser to lay out the whole page once per label: tens of
//! milliseconds per chart, on every run. Lines, rectangles, paths, circles
//! and polygons are drawn here too, setting the context's colour and width
//! only when they change: plotters' backend formats and sends a colour string
//! for every grid line, which was most of the time a chart took to draw.

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontTransform,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

type Error = DrawingErrorKind<<CanvasBackend as DrawingBackend>::ErrorType>;

/// Line height of a text box, as a multiple of the font size (a browser's
/// `line-height: normal`, which plotters' measurement saw).
const LINE_HEIGHT: f64 = 1.15;

/// Plotters' canvas backend with text measured on the canvas.
pub struct MeasuringCanvas {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
    /// The stroke colour and width last set on the context, and the fill
    /// colour (None: unknown, after plotters' backend drew on it).
    stroke: Option<(BackendColor, u32)>,
    fill: Option<BackendColor>,
}

/// A colour as the canvas reads it.
fn css(color: BackendColor) -> String {
    let (r, g, b) = color.rgb;
    format!("rgba({r},{g},{b},{})", color.alpha)
}

fn same(a: BackendColor, b: BackendColor) -> bool {
    a.rgb == b.rgb && a.alpha == b.alpha
}

/// Plotters' half-pixel shift of horizontal and vertical lines, so a
/// one-pixel line covers one row or column of pixels, not two halves.
fn crisp(from: BackendCoord, to: BackendCoord) -> ((f64, f64), (f64, f64)) {
    let (mut a, mut b) = (
        (f64::from(from.0), f64::from(from.1)),
        (f64::from(to.0), f64::from(to.1)),
    );
    if from.0 == to.0 {
        a.0 -= 0.5;
        b.0 -= 0.5;
    }
    if from.1 == to.1 {
        a.1 -= 0.5;
        b.1 -= 0.5;
    }
    (a, b)
}

impl MeasuringCanvas {
    /// A backend drawing on `canvas`, if it has a 2D context.
    pub fn new(canvas: HtmlCanvasElement) -> Option<MeasuringCanvas> {
        let context = canvas
            .get_context("2d")
            .ok()??
            .dyn_into::<CanvasRenderingContext2d>()
            .ok()?;
        let inner = CanvasBackend::with_canvas_object(canvas)?;
        Some(MeasuringCanvas {
            inner,
            context,
            stroke: None,
            fill: None,
        })
    }

    fn stroke_style(&mut self, style: &impl BackendStyle) {
        let (color, width) = (style.color(), style.stroke_width());
        if !self
            .stroke
            .is_some_and(|(c, w)| same(c, color) && w == width)
        {
            self.context.set_stroke_style_str(&css(color));
            self.context.set_line_width(f64::from(width));
            self.stroke = Some((color, width));
        }
    }

    fn fill_style(&mut self, color: BackendColor) {
        if !self.fill.is_some_and(|c| same(c, color)) {
            self.context.set_fill_style_str(&css(color));
            self.fill = Some(color);
        }
    }

    /// Trace `points` as one path (closed for a fill).
    fn trace(&self, points: impl IntoIterator<Item = BackendCoord>, close: bool) -> bool {
        let mut points = points.into_iter();
        self.context.begin_path();
        let Some(start) = points.next() else {
            return false;
        };
        self.context.move_to(f64::from(start.0), f64::from(start.1));
        for p in points {
            self.context.line_to(f64::from(p.0), f64::from(p.1));
        }
        if close {
            self.context.close_path();
        }
        true
    }
}

impl DrawingBackend for MeasuringCanvas {
    type ErrorType = <CanvasBackend as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Error> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Error> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error> {
        self.fill = None;
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (a, b) = crisp(from, to);
        self.stroke_style(style);
        self.context.begin_path();
        self.context.move_to(a.0, a.1);
        self.context.line_to(b.0, b.1);
        self.context.stroke();
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        let (w, h) = (
            f64::from(bottom_right.0 - upper_left.0),
            f64::from(bottom_right.1 - upper_left.1),
        );
        if fill {
            self.fill_style(style.color());
            self.context.fill_rect(x, y, w, h);
        } else {
            self.stroke_style(style);
            self.context.stroke_rect(x, y, w, h);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        self.stroke_style(style);
        if self.trace(path, false) {
            self.context.stroke();
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        if fill {
            self.fill_style(style.color());
        } else {
            self.stroke_style(style);
        }
        self.context.begin_path();
        let (x, y) = (f64::from(center.0), f64::from(center.1));
        // An arc fails only for a negative radius, which a u32 cannot be.
        let _ = self
            .context
            .arc(x, y, f64::from(radius), 0.0, std::f64::consts::TAU);
        if fill {
            self.context.fill();
        } else {
            self.context.stroke();
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        self.fill_style(style.color());
        if self.trace(vert, true) {
            self.context.fill();
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error> {
        // Plotters' backend sets the fill colour (and may save and restore
        // the context) to draw text.
        self.fill = None;
        self.stroke = None;
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error> {
        // The same font string the canvas backend draws with.
        self.context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str(),
        ));
        let width = self
            .context
            .measure_text(text)
            .map(|m| m.width())
            // Without a measurement, an average glyph's width.
            .unwrap_or(0.55 * style.size() * text.chars().count() as f64);
        let (w, h) = (
            width.ceil() as u32,
            (style.size() * LINE_HEIGHT).ceil() as u32,
        );
        Ok(match style.transform() {
            FontTransform::Rotate90 | FontTransform::Rotate270 => (h, w),
            FontTransform::None | FontTransform::Rotate180 => (w, h),
        })
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error> {
        self.fill = None;
        self.inner.blit_bitmap(pos, size, src)
    }
}
