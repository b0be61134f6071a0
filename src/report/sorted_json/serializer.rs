//! The serde `Serializer` that builds a [`Node`] tree: what `serde_json::to_value` would
//! make a `Value` of, its scalars written once into the [`Tree`]'s buffer.

use serde::ser::{self, Serialize};
use serde_json::Error;

use super::{Key, Node, Tree};

/// Serializes into a [`Node`] what `serde_json::to_value` would make a `Value` of.
pub(super) struct NodeSerializer<'t> {
    pub(super) tree: &'t mut Tree,
}

/// A `Value::Number` of a float: finite ones as f64, others null.
fn float(tree: &mut Tree, v: f64) -> Result<Node, Error> {
    if v.is_finite() {
        tree.scalar(&v)
    } else {
        tree.scalar(&())
    }
}

impl<'t> ser::Serializer for NodeSerializer<'t> {
    type Ok = Node;
    type Error = Error;
    type SerializeSeq = Seq<'t>;
    type SerializeTuple = Seq<'t>;
    type SerializeTupleStruct = Seq<'t>;
    type SerializeTupleVariant = Seq<'t>;
    type SerializeMap = Object<'t>;
    type SerializeStruct = Object<'t>;
    type SerializeStructVariant = Object<'t>;

    fn serialize_bool(self, v: bool) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_i8(self, v: i8) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_i16(self, v: i16) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_i32(self, v: i32) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_i64(self, v: i64) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_i128(self, v: i128) -> Result<Node, Error> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.tree.scalar(&v),
            (_, Ok(v)) => self.tree.scalar(&v),
            _ => Err(ser::Error::custom("number out of range")),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_u16(self, v: u16) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_u32(self, v: u32) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_u64(self, v: u64) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_u128(self, v: u128) -> Result<Node, Error> {
        match u64::try_from(v) {
            Ok(v) => self.tree.scalar(&v),
            Err(_) => Err(ser::Error::custom("number out of range")),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<Node, Error> {
        // As a `Value` holds it: widened to f64.
        float(self.tree, f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Node, Error> {
        float(self.tree, v)
    }
    fn serialize_char(self, v: char) -> Result<Node, Error> {
        self.tree.scalar(&v)
    }
    fn serialize_str(self, v: &str) -> Result<Node, Error> {
        self.tree.scalar(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, Error> {
        let items = v
            .iter()
            .map(|b| self.tree.scalar(b))
            .collect::<Result<_, _>>()?;
        Ok(Node::Array(items))
    }
    fn serialize_none(self) -> Result<Node, Error> {
        self.tree.scalar(&())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Node, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, Error> {
        self.tree.scalar(&())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Node, Error> {
        self.tree.scalar(&())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Node, Error> {
        self.tree.scalar(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Node, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node, Error> {
        let inner = value.serialize(NodeSerializer {
            tree: &mut *self.tree,
        })?;
        Ok(Node::Object(vec![(Key::Field(variant), inner)]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'t>, Error> {
        Ok(Seq {
            tree: self.tree,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'t>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'t>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'t>, Error> {
        Ok(Seq {
            tree: self.tree,
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Object<'t>, Error> {
        Ok(Object {
            tree: self.tree,
            entries: Vec::with_capacity(len.unwrap_or(0)),
            next_key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Object<'t>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Object<'t>, Error> {
        Ok(Object {
            tree: self.tree,
            entries: Vec::with_capacity(len),
            next_key: None,
            variant: Some(variant),
        })
    }
}

/// An array being filled (a tuple variant's, wrapped in an object of its name).
pub(super) struct Seq<'t> {
    tree: &'t mut Tree,
    items: Vec<Node>,
    variant: Option<&'static str>,
}

impl Seq<'_> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let node = value.serialize(NodeSerializer {
            tree: &mut *self.tree,
        })?;
        self.items.push(node);
        Ok(())
    }

    fn done(self) -> Node {
        let array = Node::Array(self.items);
        match self.variant {
            Some(variant) => Node::Object(vec![(Key::Field(variant), array)]),
            None => array,
        }
    }
}

/// The four array-like serde traits, each adding an element (`$add`) to a [`Seq`].
macro_rules! seq_impl {
    ($($trait:ident :: $add:ident),*) => {$(
        impl ser::$trait for Seq<'_> {
            type Ok = Node;
            type Error = Error;
            fn $add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> Result<Node, Error> {
                Ok(self.done())
            }
        }
    )*};
}

seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object being filled (a struct variant's, wrapped in an object of its name).
pub(super) struct Object<'t> {
    tree: &'t mut Tree,
    entries: Vec<(Key, Node)>,
    next_key: Option<String>,
    variant: Option<&'static str>,
}

impl Object<'_> {
    fn value_of<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<Node, Error> {
        value.serialize(NodeSerializer {
            tree: &mut *self.tree,
        })
    }

    fn done(self) -> Node {
        let object = Node::sorted(self.entries);
        match self.variant {
            Some(variant) => Node::Object(vec![(Key::Field(variant), object)]),
            None => object,
        }
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = Node;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.next_key = Some(map_key(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value without its key"))?;
        let node = self.value_of(value)?;
        self.entries.push((Key::Owned(key), node));
        Ok(())
    }
    fn end(self) -> Result<Node, Error> {
        Ok(self.done())
    }
}

/// The two struct-like serde traits: a field is an entry under its name.
macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Object<'_> {
            type Ok = Node;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                let node = self.value_of(value)?;
                self.entries.push((Key::Field(key), node));
                Ok(())
            }
            fn end(self) -> Result<Node, Error> {
                Ok(self.done())
            }
        }
    )*};
}

struct_impl!(SerializeStruct, SerializeStructVariant);

/// A map key as a `Value`'s object holds it: a string, or a number or bool written as
/// one; anything else is refused (and the caller falls back to the `Value`).
fn map_key<T: Serialize + ?Sized>(key: &T) -> Result<String, Error> {
    match serde_json::to_value(key)? {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        _ => Err(<Error as ser::Error>::custom(
            "a map key that is not a string",
        )),
    }
}
