//! The vocabulary every other layer speaks: the one text escaper ([`text`]), every finding kind
//! ([`findings`]), the facts a dialect hands the accumulator ([`fact`]) and the limits of a read
//! ([`limits`]). It depends on nothing
//! else in the crate, so the byte layer can raise findings without knowing who reads them.

pub mod fact;
pub mod findings;
pub mod limits;
pub mod text;
