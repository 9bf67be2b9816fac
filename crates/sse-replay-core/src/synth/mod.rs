//! Streams made on purpose: stub recordings with their ground truth ([`stub`],
//! [`stub_complete`]), the quirk table ([`quirk`]), the bundled catalog ([`bundled`]), the
//! generated corpus ([`corpus`]) and the large benchmark stream ([`generate`]). Its tests check
//! what it builds with [`crate::analyse`]; nothing below it builds stubs outside tests.

pub mod bundled;
pub mod corpus;
pub mod generate;
pub mod quirk;
pub mod stub;
pub mod stub_complete;
