//! Settings read from text. Every enum of the options types is parsed from its name one way,
//! by serde: a TOML file, Python's keyword arguments, the command's flags and its
//! `--set SECTION.KEY=VALUE` overrides all read `"ragas"` as the same `QuoteStyle::Ragas`.
//!
//! ```
//! use polars_rag::text::quotes::QuoteStyle;
//! assert_eq!("ragas".parse::<QuoteStyle>().unwrap(), QuoteStyle::Ragas);
//! let e = "curly".parse::<QuoteStyle>().unwrap_err().to_string();
//! assert!(e.contains("curly") && e.contains("standard") && e.contains("ragas"), "{e}");
//! ```

use serde::de::{DeserializeOwned, IntoDeserializer};

/// Parses `name` as the setting `T`, as serde reads it from a configuration; the error names
/// the value and the accepted ones.
///
/// ```
/// use polars_rag::metrics::locate::{align::Trim, LocateCompat};
/// use polars_rag::settings::parse_choice;
/// assert_eq!(parse_choice::<LocateCompat>("soak").unwrap(), LocateCompat::Soak);
/// assert!(parse_choice::<Trim>("exact").is_err());
/// ```
pub fn parse_choice<T: DeserializeOwned>(name: &str) -> crate::Result<T> {
    T::deserialize(name.into_deserializer())
        .map_err(|e: serde::de::value::Error| crate::Error::options(e.to_string()))
}

/// `FromStr` for settings enums, by [`parse_choice`].
macro_rules! from_str_by_serde {
    ($($setting:ty),+ $(,)?) => {
        $(
            impl std::str::FromStr for $setting {
                type Err = $crate::Error;

                fn from_str(name: &str) -> $crate::Result<Self> {
                    $crate::settings::parse_choice(name)
                }
            }
        )+
    };
}
pub(crate) use from_str_by_serde;
