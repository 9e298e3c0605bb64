//! Where a request goes when its tier gives up on it: a chain of backends
//! (`api.fallback`), tried in order, each once. A chain of one is written
//! as a plain name, as scenarios and links wrote it before chains existed.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Most backends a fallback chain may name.
pub const MAX_FALLBACKS: usize = 4;

/// A chain as written: one name, or a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    One(String),
    Chain(Vec<String>),
}

/// Serialise a chain of one as its name, a longer one as a list.
pub fn serialize<S: Serializer>(chain: &[String], s: S) -> Result<S::Ok, S::Error> {
    match chain {
        [one] => one.serialize(s),
        many => many.serialize(s),
    }
}

/// Read a name or a list of names.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Written::deserialize(d)? {
        Written::One(name) => vec![name],
        Written::Chain(chain) => chain,
    })
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(default, with = "super", skip_serializing_if = "Vec::is_empty")]
        fallback: Vec<String>,
    }

    #[test]
    fn a_chain_of_one_reads_and_writes_as_the_plain_name_it_was() {
        let one: Holder = serde_json::from_str(r#"{"fallback":"small"}"#).expect("reads");
        assert_eq!(one.fallback, ["small"]);
        assert_eq!(
            serde_json::to_string(&one).expect("writes"),
            r#"{"fallback":"small"}"#
        );
        let two: Holder =
            serde_json::from_str(r#"{"fallback":["small","self-hosted"]}"#).expect("reads");
        assert_eq!(two.fallback, ["small", "self-hosted"]);
        assert_eq!(
            serde_json::to_string(&two).expect("writes"),
            r#"{"fallback":["small","self-hosted"]}"#
        );
        let none: Holder = serde_json::from_str("{}").expect("reads");
        assert_eq!(serde_json::to_string(&none).expect("writes"), "{}");
        assert!(serde_json::from_str::<Holder>(r#"{"fallback":3}"#).is_err());
    }
}
