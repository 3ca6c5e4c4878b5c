//! Leaf helpers every stage may use: byte scanners, rounding, Python reprs, number formats.

pub mod fields;
pub mod num;
pub mod python;
pub mod round;
