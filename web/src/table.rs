//! Every table on the page, built one way ([`data_table`]): its class and
//! test id, a caption saying what it holds, a header row of [`Column`]s
//! (each with its tooltip, or a title only screen readers hear), and its
//! rows. A table whose columns depend on the run gives them as a closure.

use leptos::prelude::*;

/// A column's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    title: &'static str,
    help: Option<&'static str>,
    /// Heard by screen readers, not shown (a column of buttons).
    hidden: bool,
}

impl Column {
    /// A column titled `title` ("" for a column of row labels).
    pub const fn new(title: &'static str) -> Column {
        Column {
            title,
            help: None,
            hidden: false,
        }
    }

    /// A column whose title only screen readers hear.
    pub const fn hidden(title: &'static str) -> Column {
        Column {
            title,
            help: None,
            hidden: true,
        }
    }

    /// The same column, with a tooltip saying what it counts.
    pub const fn help(self, help: &'static str) -> Column {
        Column {
            help: Some(help),
            ..self
        }
    }

    fn header(self) -> impl IntoView {
        let title = if self.hidden {
            view! { <span class="visually-hidden">{self.title}</span> }.into_any()
        } else {
            self.title.into_any()
        };
        view! { <th scope="col" title=self.help>{title}</th> }
    }
}

/// The columns of [`data_table`]: fixed, or depending on the run.
pub fn columns(list: &[Column]) -> impl Fn() -> Vec<Column> + Send + Sync + use<> {
    let list = list.to_vec();
    move || list.clone()
}

/// A table: `class` and `testid` on it, `caption` (None for a table that
/// its section's heading names), `head` its columns (none: no header row,
/// a table of labelled rows), and `body` its rows.
pub fn data_table(
    class: &'static str,
    testid: Option<&'static str>,
    caption: Option<&'static str>,
    head: impl Fn() -> Vec<Column> + Send + Sync + 'static,
    body: impl IntoView + 'static,
) -> impl IntoView {
    let has_head = !head().is_empty();
    view! {
        <table class=class data-testid=testid>
            {caption.map(|c| view! { <caption>{c}</caption> })}
            {has_head
                .then(|| {
                    view! {
                        <thead>
                            <tr>{move || head().into_iter().map(Column::header).collect_view()}</tr>
                        </thead>
                    }
                })}
            <tbody>{body}</tbody>
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_keeps_its_title_and_gains_its_help() {
        let c = Column::new("Meets in").help("runs meeting the targets");
        assert_eq!(c.title, "Meets in");
        assert_eq!(c.help, Some("runs meeting the targets"));
        assert!(!c.hidden);
        assert!(Column::hidden("Apply").hidden);
        let all = columns(&[Column::new("a"), Column::new("b")]);
        assert_eq!(all().len(), 2);
    }
}
