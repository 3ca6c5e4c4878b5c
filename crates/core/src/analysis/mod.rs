//! Computed once from the timeline and shared by the diagnosis and the what-if:
//! the steady window, the fitted server model, client-versus-server reconciliation.

pub mod cap;
pub mod compare;
pub mod levers;
pub mod ranks;
pub mod reconcile;
pub mod roofline;
pub mod settings;
pub mod whatif;
pub mod window;
