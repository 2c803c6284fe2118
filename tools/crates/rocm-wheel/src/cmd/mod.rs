pub mod build;
pub mod bundle;
pub mod check;
pub mod inspect;
pub mod rpath;
pub mod thin;
