//! Files the page offers: CSV exports, the scenario as JSON, charts as PNG.

use leptos::prelude::*;
use sim_core::Report;

/// Offer `data` as a file download.
pub fn download(name: &str, mime: &str, data: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(data));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    download_url(name, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Offer what `url` points at as a file download.
pub fn download_url(name: &str, url: &str) {
    use wasm_bindgen::JsCast;
    let Ok(el) = document().create_element("a") else {
        return;
    };
    let Ok(a) = el.dyn_into::<web_sys::HtmlAnchorElement>() else {
        return;
    };
    a.set_href(url);
    a.set_download(name);
    a.click();
}

/// A button that downloads a CSV made from the current report.
pub fn report_export(
    id: &'static str,
    label: &'static str,
    file: &'static str,
    make: fn(&Report) -> String,
    report: RwSignal<Option<Report>>,
) -> impl IntoView {
    view! {
        <button
            class="secondary"
            data-testid=id
            on:click=move |_| {
                if let Some(text) = report.with_untracked(|r| r.as_ref().map(make)) {
                    download(file, "text/csv", &text);
                }
            }
        >
            {label}
        </button>
    }
}

/// A button that downloads a chart's canvas as PNG.
pub fn png_button(id: &'static str, canvas: NodeRef<leptos::html::Canvas>) -> impl IntoView {
    view! {
        <button
            class="png"
            data-testid=format!("{id}-png")
            aria-label="Download this chart as PNG"
            on:click=move |_| {
                if let Some(c) = canvas.get_untracked()
                    && let Ok(url) = c.to_data_url()
                {
                    download_url(&format!("{id}.png"), &url);
                }
            }
        >
            "PNG"
        </button>
    }
}
