//! The canvas backend the page's charts draw on: plotters' canvas backend,
//! with text measured by the canvas itself (`measureText`). Plotters' own web
//! text measurement appends a span to the page and reads its size, forcing
//! the browser to lay out the whole page once per label: tens of
//! milliseconds per chart, on every run.

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
        Some(MeasuringCanvas { inner, context })
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
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error> {
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
        self.inner.blit_bitmap(pos, size, src)
    }
}
