//! Entry point of the WebAssembly bundle that Trunk builds.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(web::App);
    // The page is up: the static loading screen in index.html goes.
    if let Some(el) = leptos::prelude::document().get_element_by_id("loading") {
        el.remove();
    }
}
