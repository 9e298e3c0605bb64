//! Routing rules in their readable format, written and read whole:
//! `class chat and prompt < 1000 -> small; 30% -> frontier; all -> big
//! overflow > 8 -> frontier`. A rule that does not read to its end is
//! refused at the first word that does not fit, by its place in the rule;
//! nothing is dropped or merged on the way.
//!
//! Grammar, word by word (names with spaces or symbols in double quotes):
//!
//! ```text
//! rule      = ("all" | condition ("and" condition)*) "->" name [overflow]
//! condition = "class" name | "prompt" "<" TOKENS | PERCENT "%"
//! overflow  = "overflow" ">" N "->" name
//! ```

use crate::format::plain;
use crate::scenario::{MAX_RULES, Overflow, RoutingRule};

/// The rules as the `routing` parameter writes them, `; ` between rules.
pub fn routing_text(rules: &[RoutingRule]) -> String {
    rules.iter().map(rule_text).collect::<Vec<_>>().join("; ")
}

/// A name as a rule writes it: in quotes when a bare one would not read
/// back as itself.
fn name_text(name: &str) -> String {
    let bare = !name.is_empty()
        && !matches!(name, "and" | "overflow" | "all")
        && !name.contains("->")
        && !name.contains(|c: char| c.is_whitespace() || matches!(c, '"' | '<' | '>' | '→' | ';'));
    if bare {
        name.to_owned()
    } else {
        format!("\"{name}\"")
    }
}

fn rule_text(r: &RoutingRule) -> String {
    let mut when = Vec::new();
    if let Some(c) = &r.class {
        when.push(format!("class {}", name_text(c)));
    }
    if let Some(n) = r.prompt_under {
        when.push(format!("prompt < {n}"));
    }
    if let Some(s) = r.share {
        when.push(format!("{}%", plain(s * 100.0)));
    }
    let when = if when.is_empty() {
        "all".to_owned()
    } else {
        when.join(" and ")
    };
    let mut out = format!("{when} -> {}", name_text(&r.to));
    if let Some(o) = &r.overflow {
        out += &format!(
            " overflow > {} -> {}",
            o.queue_per_replica,
            name_text(&o.to)
        );
    }
    out
}

/// Parse the `routing` parameter's text (see [`routing_text`]); each
/// problem names the rule (counted from 1), the word where reading stopped
/// and its place (characters from the rule's start, from 1).
pub fn parse_routing(text: &str) -> Result<Vec<RoutingRule>, String> {
    let parts: Vec<&str> = text
        .split([';', '\n'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() > MAX_RULES {
        return Err(format!(
            "routing: at most {MAX_RULES} rules, got {}",
            parts.len()
        ));
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| parse_rule(p).map_err(|e| format!("routing rule {} ({p:?}): {e}", i + 1)))
        .collect()
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A bare word or a quoted name.
    Word {
        text: String,
        quoted: bool,
    },
    Arrow,
    Less,
    More,
}

/// A token and the character it starts at (from 1).
type Spanned = (Tok, usize);

fn tokens(rule: &str) -> Result<Vec<Spanned>, String> {
    let chars: Vec<char> = rule.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '→' {
            out.push((Tok::Arrow, at));
            i += 1;
        } else if c == '-' && chars.get(i + 1) == Some(&'>') {
            out.push((Tok::Arrow, at));
            i += 2;
        } else if c == '<' {
            out.push((Tok::Less, at));
            i += 1;
        } else if c == '>' {
            out.push((Tok::More, at));
            i += 1;
        } else if c == '"' {
            let end = chars[i + 1..]
                .iter()
                .position(|&c| c == '"')
                .ok_or_else(|| format!("at character {at}: a quoted name has no closing quote"))?;
            let text: String = chars[i + 1..i + 1 + end].iter().collect();
            out.push((Tok::Word { text, quoted: true }, at));
            i += end + 2;
        } else {
            let start = i;
            let ends = |i: usize| {
                chars[i].is_whitespace()
                    || matches!(chars[i], '"' | '<' | '>' | '→')
                    || (chars[i] == '-' && chars.get(i + 1) == Some(&'>'))
            };
            while i < chars.len() && !ends(i) {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push((
                Tok::Word {
                    text,
                    quoted: false,
                },
                at,
            ));
        }
    }
    Ok(out)
}

/// Reading one rule's tokens from the front.
struct Reader {
    toks: Vec<Spanned>,
    next: usize,
    /// Characters in the rule (where "the end" is).
    len: usize,
}

impl Reader {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.next).map(|(t, _)| t)
    }

    fn bare(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word { text, quoted: false }) if text == word)
    }

    /// Where the next token starts, in words.
    fn here(&self) -> String {
        match self.toks.get(self.next) {
            None => format!("at the end (character {})", self.len + 1),
            Some((t, at)) => {
                let shown = match t {
                    Tok::Word { text, .. } => text.clone(),
                    Tok::Arrow => "->".into(),
                    Tok::Less => "<".into(),
                    Tok::More => ">".into(),
                };
                format!("at {shown:?} (character {at})")
            }
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{}: {what}", self.here()))
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<(), String> {
        if self.peek() == Some(tok) {
            self.next += 1;
            Ok(())
        } else {
            self.fail(what)
        }
    }

    /// A whole number.
    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, String> {
        match self.peek() {
            Some(Tok::Word {
                text,
                quoted: false,
            }) => match text.parse::<T>() {
                Ok(n) => {
                    self.next += 1;
                    Ok(n)
                }
                Err(_) => self.fail(what),
            },
            _ => self.fail(what),
        }
    }

    /// A name: one word, or a quoted one (for names with spaces or
    /// symbols), never a word of the grammar.
    fn name(&mut self, what: &str) -> Result<String, String> {
        let name = match self.peek() {
            Some(Tok::Word { text, quoted })
                if *quoted || !matches!(text.as_str(), "and" | "overflow") =>
            {
                text.clone()
            }
            _ => return self.fail(what),
        };
        self.next += 1;
        Ok(name)
    }
}

fn parse_rule(text: &str) -> Result<RoutingRule, String> {
    let toks = tokens(text)?;
    if !toks.iter().any(|(t, _)| *t == Tok::Arrow) {
        return Err("write CONDITIONS -> POOL OR TIER, e.g. \"class chat -> small\"".into());
    }
    let mut r = Reader {
        toks,
        next: 0,
        len: text.chars().count(),
    };
    let mut rule = RoutingRule {
        class: None,
        prompt_under: None,
        share: None,
        to: String::new(),
        overflow: None,
    };
    if r.bare("all") {
        r.next += 1;
    } else {
        conditions(&mut r, &mut rule)?;
    }
    r.expect(
        &Tok::Arrow,
        "expected \"and\" and another condition, or \"->\" and where the requests go",
    )?;
    rule.to = r.name("name the pool or tier after -> (in quotes if it has spaces)")?;
    if r.bare("overflow") {
        r.next += 1;
        const THRESHOLD: &str =
            "the overflow threshold is \"> N\" requests waiting per replica (a whole number)";
        r.expect(&Tok::More, THRESHOLD)?;
        let n: u32 = r.number(THRESHOLD)?;
        r.expect(
            &Tok::Arrow,
            "write the overflow as \"overflow > N -> POOL OR TIER\"",
        )?;
        let to = r.name("name the pool or tier the overflow goes to")?;
        rule.overflow = Some(Overflow {
            queue_per_replica: n,
            to,
        });
    }
    if r.peek().is_some() {
        return r.fail(
            "the rule goes on past where its requests go (one \"->\" a rule, an overflow after it, names with spaces in quotes)",
        );
    }
    Ok(rule)
}

const CONDITIONS: &str =
    "use \"class NAME\", \"prompt < TOKENS\", \"P%\" (joined by \"and\"), or \"all\"";

/// The conditions before "->", joined by "and", into `rule`.
fn conditions(r: &mut Reader, rule: &mut RoutingRule) -> Result<(), String> {
    loop {
        let start = r.next;
        if r.bare("class") {
            r.next += 1;
            let name = r.name("name the class after \"class\" (in quotes if it has spaces)")?;
            if rule.class.is_some() {
                r.next = start;
                return r.fail("a request has one class: a second class condition never matches; write a rule for each class");
            }
            rule.class = Some(name);
        } else if r.bare("prompt") {
            r.next += 1;
            r.expect(
                &Tok::Less,
                "a prompt condition is \"prompt < TOKENS\" (a whole number)",
            )?;
            let n: u32 = r.number("a prompt condition is \"prompt < TOKENS\" (a whole number)")?;
            if rule.prompt_under.is_some() {
                r.next = start;
                return r.fail("one prompt condition a rule: the shorter bound decides");
            }
            rule.prompt_under = Some(n);
        } else if let Some(Tok::Word {
            text,
            quoted: false,
        }) = r.peek()
            && let Some(p) = text.strip_suffix('%')
        {
            let p: f64 = match p.parse() {
                Ok(p) => p,
                Err(_) => return r.fail("a share is \"P%\", a number of percent"),
            };
            if rule.share.is_some() {
                return r.fail("one share a rule: write the share you mean");
            }
            r.next += 1;
            rule.share = Some(p / 100.0);
        } else if let Some(Tok::Word { text, .. }) = r.peek() {
            let e = format!("unknown condition {text:?}: {CONDITIONS}");
            return r.fail(&e);
        } else {
            return r.fail(CONDITIONS);
        }
        if r.bare("and") {
            r.next += 1;
        } else {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_reads_back_as_written() {
        let text = "class simple and prompt < 1000 and 25% -> small overflow > 4 -> frontier; class \"chat (reuses a prefix)\" -> \"big pool\"; all -> self-hosted";
        let rules = parse_routing(text).expect("parses");
        assert_eq!(rules.len(), 3);
        assert_eq!(rules[1].class.as_deref(), Some("chat (reuses a prefix)"));
        assert_eq!(rules[1].to, "big pool");
        assert_eq!(routing_text(&rules), text);
        assert_eq!(parse_routing(&routing_text(&rules)).expect("again"), rules);
    }

    #[test]
    fn a_rule_that_does_not_read_whole_is_refused_where_it_stops() {
        for (bad, says) in [
            (
                "class simple and class hard -> small",
                "at \"class\" (character 18): a request has one class",
            ),
            (
                "prompt < 10 and prompt < 20 -> small",
                "at \"prompt\" (character 17): one prompt condition",
            ),
            (
                "10% and 20% -> small",
                "at \"20%\" (character 9): one share",
            ),
            (
                "class chat -> small -> big",
                "at \"->\" (character 21): the rule goes on",
            ),
            (
                "class chat andd 10% -> small",
                "at \"andd\" (character 12): expected \"and\"",
            ),
            ("class -> small", "at \"->\" (character 7): name the class"),
            (
                "prompt 10 -> small",
                "at \"10\" (character 8): a prompt condition",
            ),
            ("x% -> small", "at \"x%\" (character 1): a share is"),
            (
                "all -> small overflow > many -> api",
                "at \"many\" (character 25): the overflow threshold",
            ),
            ("all -> \"small", "no closing quote"),
            ("all ->", "at the end (character 7): name the pool or tier"),
        ] {
            let e = parse_routing(bad).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
