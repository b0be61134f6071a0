//! Evidence about an out-of-memory failure that comes from outside a capture: today the
//! error message a user pastes from a log ([`message`]).

pub mod message;
