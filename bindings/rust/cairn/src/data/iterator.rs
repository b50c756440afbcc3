//! Iterators over datasets and the elements they yield.

use std::fmt;
use std::ops::{Deref, Index};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use cairn_sys as sys;

use crate::error::check;
use crate::{Code, Error, Object, ObjectKind, Result, Tensor};

use super::{new_dataset, Dataset};

/// One element of a dataset: its components in order, by index (`element[0]`, [`Element::get`])
/// and by name (`element["image"]`, [`Element::by_name`]). The tensors are the caller's.
#[derive(Clone)]
pub struct Element {
    names: Arc<[String]>,
    tensors: Vec<Tensor>,
}

impl Element {
    /// The number of components.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether it has no components (never, for an element from an iterator).
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// The components' names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The components' tensors, in order.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// Component `index`.
    pub fn get(&self, index: usize) -> Option<&Tensor> {
        self.tensors.get(index)
    }

    /// The component named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Tensor> {
        self.names.iter().position(|n| n == name).map(|i| &self.tensors[i])
    }

    /// (name, tensor) pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.names.iter().map(String::as_str).zip(&self.tensors)
    }

    /// The tensors, in order.
    pub fn into_tensors(self) -> Vec<Tensor> {
        self.tensors
    }
}

impl Index<usize> for Element {
    type Output = Tensor;
    /// Component `index`; panics past the last.
    fn index(&self, index: usize) -> &Tensor {
        &self.tensors[index]
    }
}

impl Index<&str> for Element {
    type Output = Tensor;
    /// The component named `name`; panics when there is none.
    fn index(&self, name: &str) -> &Tensor {
        self.by_name(name)
            .unwrap_or_else(|| panic!("cairn: the element has no component {name:?} (it has {:?})", self.names))
    }
}

impl fmt::Debug for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// An iterator over a [`Dataset`] (tf.data's iterator): an `Iterator<Item = Result<Element>>`
/// that returns `None` at the end of the data (and after it). A failed element is an `Err`, and
/// the next call goes on with the element after it.
///
/// It is a tracked object (kind [`ObjectKind::Iterator`]; it dereferences to [`Object`]): make it
/// a child of a checkpoint (`Checkpoint::new(&ctx, &[("model", &net), ("data", &it)])`) and it
/// saves and restores with the model; after a restore the elements continue exactly as an
/// uninterrupted run's would. [`DatasetIterator::save`] and [`DatasetIterator::restore`] do the
/// same with bytes.
///
/// `Send + Sync`: several threads may pull from one iterator (`get_next(&self)`, or iterate over
/// `&iterator`); each element goes to one of them. Dropping the last reference (this handle or a
/// checkpoint edge) stops its background threads.
pub struct DatasetIterator {
    object: Object,
    names: Arc<[String]>,
}

impl DatasetIterator {
    pub(super) fn new(object: Object, names: Vec<String>) -> DatasetIterator {
        DatasetIterator { object, names: names.into() }
    }

    /// The next element; `Ok(None)` at the end of the data (and after it). An element that failed
    /// (a map's error names the map and the element) is an `Err`; the iterator stays usable.
    /// FAILED_PRECONDITION after [`DatasetIterator::close`].
    pub fn get_next(&self) -> Result<Option<Element>> {
        let mut outputs: Vec<*mut sys::cairn_tensor> = vec![ptr::null_mut(); self.names.len()];
        // SAFETY: a live iterator; `outputs` has one slot per component.
        let status = unsafe { sys::cairn_iterator_next(self.object.as_raw(), outputs.as_mut_ptr(), outputs.len()) };
        if let Err(e) = unsafe { check(status) } {
            return if e.code() == Code::OutOfRange { Ok(None) } else { Err(e) };
        }
        // Own every output first, so that all are freed whatever happens next.
        // SAFETY: each non-NULL slot is a new tensor the caller owns.
        let owned: Vec<Option<Tensor>> =
            outputs.into_iter().map(|t| NonNull::new(t).map(|t| unsafe { Tensor::from_raw(t) })).collect();
        let tensors = owned.into_iter().collect::<Option<Vec<Tensor>>>().ok_or_else(|| {
            Error::new(Code::Internal, "cairn_iterator_next: returned success but not every component")
        })?;
        Ok(Some(Element { names: Arc::clone(&self.names), tensors }))
    }

    /// Elements delivered since the start (restored with the state).
    pub fn position(&self) -> i64 {
        // SAFETY: a live handle (here and below).
        unsafe { sys::cairn_iterator_position(self.object.as_raw()) }
    }

    /// The state as bytes (what a checkpoint stores); its length is the state's size.
    pub fn save(&self) -> Result<Vec<u8>> {
        let (mut out, mut n) = (ptr::null_mut(), 0);
        unsafe { check(sys::cairn_iterator_save(self.object.as_raw(), &mut out, &mut n))? };
        if out.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: `n` bytes the caller frees with cairn_free.
        let bytes = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), n) }.to_vec();
        unsafe { sys::cairn_free(out) };
        Ok(bytes)
    }

    /// Moves to a saved state (of an iterator over the same pipeline): the next element is the one
    /// the saved iterator would have returned next. INVALID_ARGUMENT naming both pipelines for a
    /// state of another pipeline; DATA_LOSS for corrupt bytes.
    pub fn restore(&self, state: &[u8]) -> Result<()> {
        unsafe { check(sys::cairn_iterator_restore(self.object.as_raw(), state.as_ptr().cast(), state.len())) }
    }

    /// Stops the background threads and waits for them; later calls to `get_next` are
    /// FAILED_PRECONDITION. Calling it again does nothing.
    pub fn close(&self) -> Result<()> {
        unsafe { check(sys::cairn_iterator_close(self.object.as_raw())) }
    }

    /// The dataset it runs.
    pub fn dataset(&self) -> Result<Dataset> {
        new_dataset("DatasetIterator::dataset", |out| unsafe { sys::cairn_iterator_dataset(self.object.as_raw(), out) })
    }

    /// The component names of its elements.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The handle as an [`Object`] (also what `Deref` gives).
    pub fn as_object(&self) -> &Object {
        &self.object
    }
}

impl Iterator for DatasetIterator {
    type Item = Result<Element>;

    fn next(&mut self) -> Option<Result<Element>> {
        self.get_next().transpose()
    }
}

impl Iterator for &DatasetIterator {
    type Item = Result<Element>;

    fn next(&mut self) -> Option<Result<Element>> {
        self.get_next().transpose()
    }
}

impl Deref for DatasetIterator {
    type Target = Object;
    fn deref(&self) -> &Object {
        &self.object
    }
}

impl AsRef<Object> for DatasetIterator {
    fn as_ref(&self) -> &Object {
        &self.object
    }
}

impl From<DatasetIterator> for Object {
    fn from(it: DatasetIterator) -> Object {
        it.object
    }
}

impl TryFrom<Object> for DatasetIterator {
    type Error = Error;
    /// INVALID_ARGUMENT when the object is not an iterator (e.g. from `Object::get` on a
    /// checkpoint's root).
    fn try_from(object: Object) -> Result<DatasetIterator> {
        let kind = object.kind();
        if kind != ObjectKind::Iterator {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("cairn: the object is a {kind:?}, not a {:?}", ObjectKind::Iterator),
            ));
        }
        let names = new_dataset("DatasetIterator::try_from", |out| unsafe {
            sys::cairn_iterator_dataset(object.as_raw(), out)
        })?
        .component_names()?;
        Ok(DatasetIterator::new(object, names))
    }
}

impl fmt::Debug for DatasetIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatasetIterator").field("position", &self.position()).field("components", &self.names).finish()
    }
}
