//! The protobuf field numbers and one-byte keys the wire readers compare against,
//! by message, so that no reader spells a bare number.
//!
//! Two schemas are read below the message level: the `XSpace` family of
//! `proto/xplane.proto` (a capture is walked field by field and never decoded whole:
//! `src/capture`), and pprof's `Profile` of `proto/profile.proto` (walked once to bound
//! what decoding it would allocate, before prost decodes it:
//! `src/evidence/device_profile/budget.rs`). Everything else (`proto/hlo.proto`, and
//! `Profile` itself once bounded) is decoded by prost from the same `.proto` files, so
//! its numbers cannot drift.
//!
//! Each constant is named `<MESSAGE>_<FIELD>` after the message and field of
//! `proto/` it stands for, which [`ALL`] records beside it; `tests/wire_fields.rs`
//! parses `proto/*.proto` and checks every number and every key against the field of
//! that name, and that every field of `proto/xplane.proto` has its constant. One
//! exception to the naming: `XEventMetadata.id` and `XStatMetadata.id` are
//! `…_OWN_ID`, because `XEVENT_METADATA_ID` and `XSTAT_METADATA_ID` are the event's
//! and the stat's `metadata_id`.
//!
//! Keys (`…_TAG`) are the first byte of a field on the wire, made by
//! [`tag`](super::tag) from the number and the wire type its proto type implies; the
//! fast paths match bytes against them. What each field holds, and what oomlens takes it
//! to mean: docs/xplane.md.

use super::{tag, WireType};

/// One field-number constant, as [`ALL`] lists it. (No derived trait that makes code:
/// this module compiles to nothing but constants, so that it cannot change how the
/// readers are compiled.)
#[derive(Clone, Copy)]
pub struct Named {
    /// The constant's name, e.g. `XPLANE_LINES`.
    pub constant: &'static str,
    /// The message it belongs to, as `proto/` spells it (`MapEntry` for the entries a
    /// `map<…>` field is encoded as).
    pub message: &'static str,
    /// The field's name in that message.
    pub field: &'static str,
    pub number: u32,
}

/// One key constant, as [`TAGS`] lists it.
#[derive(Clone, Copy)]
pub struct NamedTag {
    /// The key's name: the field constant's, with `_TAG`.
    pub constant: &'static str,
    /// The field constant it is made from.
    pub field: &'static str,
    pub tag: u8,
}

macro_rules! field_numbers {
    ($( $(#[$doc:meta])* $name:ident = $message:ident . $field:ident = $number:literal; )*) => {
        $( $(#[$doc])* pub const $name: u32 = $number; )*

        /// Every field-number constant of this module, with the message and field it
        /// stands for.
        pub const ALL: &[Named] = &[$(
            Named {
                constant: stringify!($name),
                message: stringify!($message),
                field: stringify!($field),
                number: $name,
            },
        )*];
    };
}

macro_rules! keys {
    ($( $(#[$doc:meta])* $name:ident = $field:ident, $wire_type:ident; )*) => {
        $( $(#[$doc])* pub const $name: u8 = tag($field, WireType::$wire_type); )*

        /// Every key constant of this module, with the field constant it is made from.
        pub const TAGS: &[NamedTag] = &[$(
            NamedTag {
                constant: stringify!($name),
                field: stringify!($field),
                tag: $name,
            },
        )*];
    };
}

field_numbers! {
    // XSpace: the whole capture.
    /// `XSpace.planes`: one `XPlane` per host part or device.
    XSPACE_PLANES = XSpace.planes = 1;
    /// `XSpace.errors`: messages the profiler reported (dropped events, …).
    XSPACE_ERRORS = XSpace.errors = 2;
    /// `XSpace.warnings`: the profiler's warnings.
    XSPACE_WARNINGS = XSpace.warnings = 3;
    /// `XSpace.hostnames`: the hosts the capture covers.
    XSPACE_HOSTNAMES = XSpace.hostnames = 4;

    // XPlane: a host part or a device, with its own interning tables.
    /// `XPlane.id`.
    XPLANE_ID = XPlane.id = 1;
    /// `XPlane.name`: `/host:CPU`, `/host:metadata`, `/device:GPU:0`, ….
    XPLANE_NAME = XPlane.name = 2;
    /// `XPlane.lines`: the plane's timelines (threads, streams).
    XPLANE_LINES = XPlane.lines = 3;
    /// `XPlane.event_metadata`: the map of event types, metadata id → `XEventMetadata`.
    XPLANE_EVENT_METADATA = XPlane.event_metadata = 4;
    /// `XPlane.stat_metadata`: the map of stat names and interned strings, id → `XStatMetadata`.
    XPLANE_STAT_METADATA = XPlane.stat_metadata = 5;
    /// `XPlane.stats`: stats of the plane itself (device properties, profiler metadata).
    XPLANE_STATS = XPlane.stats = 6;

    // XLine: one timeline of a plane.
    /// `XLine.id`: lines with the same id are one timeline.
    XLINE_ID = XLine.id = 1;
    /// `XLine.name`: the thread or stream.
    XLINE_NAME = XLine.name = 2;
    /// `XLine.timestamp_ns`: the line's start, in nanoseconds; events are offsets from it.
    XLINE_TIMESTAMP_NS = XLine.timestamp_ns = 3;
    /// `XLine.events`: the line's events, in time order.
    XLINE_EVENTS = XLine.events = 4;
    /// `XLine.duration_ps`: the line's length (not read).
    XLINE_DURATION_PS = XLine.duration_ps = 9;
    /// `XLine.display_id`: the viewer's row (not read).
    XLINE_DISPLAY_ID = XLine.display_id = 10;
    /// `XLine.display_name`: the viewer's name for the line (not read).
    XLINE_DISPLAY_NAME = XLine.display_name = 11;

    // XEvent: one event on a line.
    /// `XEvent.metadata_id`: the event's type, a key of its plane's event metadata.
    XEVENT_METADATA_ID = XEvent.metadata_id = 1;
    /// `XEvent.offset_ps`: the start, in picoseconds after the line's start.
    XEVENT_OFFSET_PS = XEvent.offset_ps = 2;
    /// `XEvent.duration_ps`: 0 for an instant event.
    XEVENT_DURATION_PS = XEvent.duration_ps = 3;
    /// `XEvent.stats`: the event's own stats (its type's come from its metadata).
    XEVENT_STATS = XEvent.stats = 4;
    /// `XEvent.num_occurrences`: an aggregated event's count, in place of an offset.
    XEVENT_NUM_OCCURRENCES = XEvent.num_occurrences = 5;

    // XStat: a named value; exactly one of the value fields is set.
    /// `XStat.metadata_id`: the stat's name, a key of its plane's stat metadata.
    XSTAT_METADATA_ID = XStat.metadata_id = 1;
    /// `XStat.double_value`: a number (fixed64).
    XSTAT_DOUBLE_VALUE = XStat.double_value = 2;
    /// `XStat.uint64_value`: a number.
    XSTAT_UINT64_VALUE = XStat.uint64_value = 3;
    /// `XStat.int64_value`: a number or a bool (also a u64 id stored signed).
    XSTAT_INT64_VALUE = XStat.int64_value = 4;
    /// `XStat.str_value`: a string written inline.
    XSTAT_STR_VALUE = XStat.str_value = 5;
    /// `XStat.bytes_value`: a serialized message (a module's `HloProto`).
    XSTAT_BYTES_VALUE = XStat.bytes_value = 6;
    /// `XStat.ref_value`: an interned string, the name of that stat metadata entry.
    XSTAT_REF_VALUE = XStat.ref_value = 7;

    // XEventMetadata: an event type.
    /// `XEventMetadata.id`: the type's key (on TPU plans, a 64-bit program id).
    XEVENT_METADATA_OWN_ID = XEventMetadata.id = 1;
    /// `XEventMetadata.name`: the event's name.
    XEVENT_METADATA_NAME = XEventMetadata.name = 2;
    /// `XEventMetadata.metadata`: opaque bytes (not read).
    XEVENT_METADATA_METADATA = XEventMetadata.metadata = 3;
    /// `XEventMetadata.display_name`: the name shown (`module(program id)` in newer plans).
    XEVENT_METADATA_DISPLAY_NAME = XEventMetadata.display_name = 4;
    /// `XEventMetadata.stats`: stats every event of the type shares (a plan's `Hlo Proto`).
    XEVENT_METADATA_STATS = XEventMetadata.stats = 5;
    /// `XEventMetadata.child_id`: child event types (not read).
    XEVENT_METADATA_CHILD_ID = XEventMetadata.child_id = 6;

    // XStatMetadata: a stat name, or an interned string value.
    /// `XStatMetadata.id`: the entry's key.
    XSTAT_METADATA_OWN_ID = XStatMetadata.id = 1;
    /// `XStatMetadata.name`: the stat's name, or the interned string.
    XSTAT_METADATA_NAME = XStatMetadata.name = 2;
    /// `XStatMetadata.description` (not read).
    XSTAT_METADATA_DESCRIPTION = XStatMetadata.description = 3;

    // A `map<K, V>` field is a repeated message of two fields (protobuf's encoding of
    // maps): `XPlane.event_metadata` and `XPlane.stat_metadata` here.
    /// A map entry's key (int64 for both maps of a plane).
    MAP_ENTRY_KEY = MapEntry.key = 1;
    /// A map entry's value (the `XEventMetadata` or `XStatMetadata`).
    MAP_ENTRY_VALUE = MapEntry.value = 2;

    // pprof's Profile (a JAX device memory profile), as far as the allocation budget
    // walks it before prost decodes it.
    /// `Profile.sample_type`: one `ValueType` per value of a sample.
    PROFILE_SAMPLE_TYPE = Profile.sample_type = 1;
    /// `Profile.sample`: the samples (one per live buffer group).
    PROFILE_SAMPLE = Profile.sample = 2;
    /// `Profile.location`: the call-stack locations.
    PROFILE_LOCATION = Profile.location = 4;
    /// `Profile.function`: the functions locations point to.
    PROFILE_FUNCTION = Profile.function = 5;
    /// `Profile.string_table`: every string, indexed from the other messages.
    PROFILE_STRING_TABLE = Profile.string_table = 6;
    /// `Sample.location_id`: the stack, leaf first (packed or not).
    SAMPLE_LOCATION_ID = Sample.location_id = 1;
    /// `Sample.value`: one value per sample type (packed or not).
    SAMPLE_VALUE = Sample.value = 2;
    /// `Sample.label`: the sample's labels (kind, device).
    SAMPLE_LABEL = Sample.label = 3;
    /// `Location.line`: the location's lines (inlined calls).
    LOCATION_LINE = Location.line = 4;
}

keys! {
    /// The key of a plane in an `XSpace` (`0x0a`).
    XSPACE_PLANES_TAG = XSPACE_PLANES, LengthDelimited;
    /// The key of a plane's id (`0x08`).
    XPLANE_ID_TAG = XPLANE_ID, Varint;
    /// The key of a plane's name (`0x12`).
    XPLANE_NAME_TAG = XPLANE_NAME, LengthDelimited;
    /// The key of a line in a plane (`0x1a`).
    XPLANE_LINES_TAG = XPLANE_LINES, LengthDelimited;
    /// The key of an event metadata entry in a plane (`0x22`).
    XPLANE_EVENT_METADATA_TAG = XPLANE_EVENT_METADATA, LengthDelimited;
    /// The key of a stat metadata entry in a plane (`0x2a`).
    XPLANE_STAT_METADATA_TAG = XPLANE_STAT_METADATA, LengthDelimited;
    /// The key of a plane stat (`0x32`).
    XPLANE_STATS_TAG = XPLANE_STATS, LengthDelimited;
    /// The key of a line's id (`0x08`).
    XLINE_ID_TAG = XLINE_ID, Varint;
    /// The key of an event in a line (`0x22`).
    XLINE_EVENTS_TAG = XLINE_EVENTS, LengthDelimited;
    /// The key of an event's metadata id (`0x08`), which encoders write first.
    XEVENT_METADATA_ID_TAG = XEVENT_METADATA_ID, Varint;
    /// The key of an event's offset (`0x10`).
    XEVENT_OFFSET_PS_TAG = XEVENT_OFFSET_PS, Varint;
    /// The key of an event's duration (`0x18`).
    XEVENT_DURATION_PS_TAG = XEVENT_DURATION_PS, Varint;
    /// The key of a stat in an event (`0x22`).
    XEVENT_STATS_TAG = XEVENT_STATS, LengthDelimited;
    /// The key of an aggregated event's count (`0x28`).
    XEVENT_NUM_OCCURRENCES_TAG = XEVENT_NUM_OCCURRENCES, Varint;
    /// The key of a stat's metadata id (`0x08`), which encoders write first.
    XSTAT_METADATA_ID_TAG = XSTAT_METADATA_ID, Varint;
    /// The key of a double stat (`0x11`).
    XSTAT_DOUBLE_VALUE_TAG = XSTAT_DOUBLE_VALUE, Fixed64;
    /// The key of a uint64 stat (`0x18`).
    XSTAT_UINT64_VALUE_TAG = XSTAT_UINT64_VALUE, Varint;
    /// The key of an int64 stat (`0x20`).
    XSTAT_INT64_VALUE_TAG = XSTAT_INT64_VALUE, Varint;
    /// The key of an inline string stat (`0x2a`).
    XSTAT_STR_VALUE_TAG = XSTAT_STR_VALUE, LengthDelimited;
    /// The key of a bytes stat (`0x32`).
    XSTAT_BYTES_VALUE_TAG = XSTAT_BYTES_VALUE, LengthDelimited;
    /// The key of a reference stat (`0x38`).
    XSTAT_REF_VALUE_TAG = XSTAT_REF_VALUE, Varint;
    /// The key of an event type's id (`0x08`).
    XEVENT_METADATA_OWN_ID_TAG = XEVENT_METADATA_OWN_ID, Varint;
    /// The key of an event type's name (`0x12`).
    XEVENT_METADATA_NAME_TAG = XEVENT_METADATA_NAME, LengthDelimited;
    /// The key of an event type's display name (`0x22`).
    XEVENT_METADATA_DISPLAY_NAME_TAG = XEVENT_METADATA_DISPLAY_NAME, LengthDelimited;
    /// The key of a stat an event type holds (`0x2a`).
    XEVENT_METADATA_STATS_TAG = XEVENT_METADATA_STATS, LengthDelimited;
    /// The key of a stat metadata entry's id (`0x08`).
    XSTAT_METADATA_OWN_ID_TAG = XSTAT_METADATA_OWN_ID, Varint;
    /// The key of a stat metadata entry's name (`0x12`).
    XSTAT_METADATA_NAME_TAG = XSTAT_METADATA_NAME, LengthDelimited;
    /// The key of an int64 map key (`0x08`).
    MAP_ENTRY_KEY_TAG = MAP_ENTRY_KEY, Varint;
    /// The key of a map entry's message value (`0x12`).
    MAP_ENTRY_VALUE_TAG = MAP_ENTRY_VALUE, LengthDelimited;
}

// Where a newer writer's fields would start: one past the highest field number of a
// message in `proto/xplane.proto` (the test checks it). Readers that check a table's
// shape accept anything from there on.
/// One past `XEventMetadata`'s highest field.
pub const XEVENT_METADATA_PAST_LAST: u32 = XEVENT_METADATA_CHILD_ID + 1;
/// One past `XStatMetadata`'s highest field.
pub const XSTAT_METADATA_PAST_LAST: u32 = XSTAT_METADATA_DESCRIPTION + 1;
/// One past `XStat`'s highest field.
pub const XSTAT_PAST_LAST: u32 = XSTAT_REF_VALUE + 1;
