//! Tracked objects: TensorFlow's Trackable, tf.Module, tf.Variable, ListWrapper and DictWrapper.
//!
//! [`Object`] is one handle to an object of any kind and carries what every kind can do (edges,
//! queries, the kind itself). [`Trackable`], [`Module`], [`Variable`], [`List`] and [`Dict`] are
//! handles known to be of one kind; each dereferences to [`Object`], so the generic methods work on
//! them too. An object of unknown kind (from [`Object::get`] or a query) becomes a typed handle
//! with [`Object::downcast`] or `TryFrom`.
//!
//! Every handle owns one reference and drops it on drop; edges hold their own, so handles and
//! objects may be dropped in any order, and an object keeps its context alive. Objects are `Send`
//! and `Sync`: cairn.h serializes writes to one object and lets reads see a consistent snapshot,
//! so mutating methods take `&self`.

use std::ffi::{c_char, CStr};
use std::fmt;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::{Code, Context, DType, Error, ObjectKind, Result, Tensor};

/// A handle to a tracked object of any kind. Dropping it drops its reference. `Clone` makes a
/// second handle to the same object (`cairn_object_share`); [`Object::is_same`] tells whether two
/// handles refer to one object.
#[repr(transparent)]
pub struct Object {
    raw: NonNull<sys::cairn_object>,
}

// SAFETY: cairn.h: "Objects may be read and written from several threads at once: writes to one
// object are serialized, and reads see a consistent snapshot." A handle is freed only by Drop,
// which needs ownership, so no other thread can be using it then.
unsafe impl Send for Object {}
unsafe impl Sync for Object {}

impl Object {
    /// The object's kind.
    pub fn kind(&self) -> ObjectKind {
        // SAFETY: a live handle (here and below).
        ObjectKind::from_raw(unsafe { sys::cairn_object_kind_of(self.raw.as_ptr()) }).unwrap_or(ObjectKind::Invalid)
    }

    /// Whether both handles refer to the same object.
    pub fn is_same(&self, other: &Object) -> bool {
        unsafe { sys::cairn_object_same(self.raw.as_ptr(), other.raw.as_ptr()) != 0 }
    }

    /// Creates or replaces the tracked edge `name`: an attribute of a trackable or module, a key of
    /// a dict, or an existing index ("0", "1", ...) of a list. The parent takes its own reference
    /// to `child`. A checkpoint value waiting for this edge is restored into `child` before this
    /// returns (its error, if any, is returned; the edge stays).
    ///
    /// `child` is any handle, borrowed (`&v`) or given (`v`, dropped after the call).
    pub fn set(&self, name: &str, child: impl AsRef<Object>) -> Result<()> {
        let child = child.as_ref();
        let name = c_string(name, "Object::set", "name")?;
        unsafe { check(sys::cairn_object_set(self.raw.as_ptr(), name.as_ptr(), child.raw.as_ptr())) }
    }

    /// Keeps `child` alive under `name` without tracking it: it is never walked, listed or
    /// checkpointed. Only trackables and modules have untracked references.
    pub fn set_untracked(&self, name: &str, child: impl AsRef<Object>) -> Result<()> {
        let child = child.as_ref();
        let name = c_string(name, "Object::set_untracked", "name")?;
        unsafe { check(sys::cairn_object_set_untracked(self.raw.as_ptr(), name.as_ptr(), child.raw.as_ptr())) }
    }

    /// The child at `name`, tracked or untracked (a list's elements are "0", "1", ...). NOT_FOUND
    /// when there is none.
    pub fn get(&self, name: &str) -> Result<Object> {
        let name = c_string(name, "Object::get", "name")?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_object_get(self.raw.as_ptr(), name.as_ptr(), &mut out))? };
        Object::from_result(out, "cairn_object_get")
    }

    /// Follows a path of edge names joined by '/' ("sub/v", "br_list/0/v").
    pub fn get_path(&self, path: &str) -> Result<Object> {
        let mut parts = path.split('/');
        let mut cur = self.get(parts.next().unwrap_or(""))?;
        for part in parts {
            cur = cur.get(part)?;
        }
        Ok(cur)
    }

    /// Deletes the edge `name` (tracked or untracked). Deleting list element i moves the later
    /// elements down one index.
    pub fn delete(&self, name: &str) -> Result<()> {
        let name = c_string(name, "Object::delete", "name")?;
        unsafe { check(sys::cairn_object_delete(self.raw.as_ptr(), name.as_ptr())) }
    }

    /// The number of tracked edges (0 for variables).
    pub fn child_count(&self) -> usize {
        unsafe { sys::cairn_object_child_count(self.raw.as_ptr()) }
    }

    /// The tracked edges in order, as (edge name, child).
    pub fn children(&self) -> Result<Vec<(String, Object)>> {
        self.query("cairn_object_children", |out| unsafe { sys::cairn_object_children(self.raw.as_ptr(), out) })
    }

    /// tf.Module.variables (`trainable_only` false) or .trainable_variables (true): own variables
    /// sorted by attribute name, then those of submodules, depth-first; each once.
    pub fn variables(&self, trainable_only: bool) -> Result<Vec<Variable>> {
        let entries = self.query("cairn_object_variables", |out| unsafe {
            sys::cairn_object_variables(self.raw.as_ptr(), i32::from(trainable_only), out)
        })?;
        Ok(entries.into_iter().map(|(_, o)| Variable(o)).collect())
    }

    /// tf.Module.submodules: every module reachable from this object (itself excluded), each once.
    pub fn submodules(&self) -> Result<Vec<Module>> {
        let entries = self
            .query("cairn_object_submodules", |out| unsafe { sys::cairn_object_submodules(self.raw.as_ptr(), out) })?;
        Ok(entries.into_iter().map(|(_, o)| Module(o)).collect())
    }

    /// tf.Module._flatten(with_path=True): every (path, object) pair below this object; an object
    /// reachable by several paths appears once per path.
    pub fn flatten(&self) -> Result<Vec<(String, Object)>> {
        self.query("cairn_object_flatten", |out| unsafe { sys::cairn_object_flatten(self.raw.as_ptr(), out) })
    }

    /// Every object reachable along tracked edges in checkpoint order: this object first (path
    /// ""), then breadth-first; each once, with the first path that reaches it.
    pub fn walk(&self) -> Result<Vec<(String, Object)>> {
        self.query("cairn_object_walk", |out| unsafe { sys::cairn_object_walk(self.raw.as_ptr(), out) })
    }

    fn query(
        &self,
        function: &str,
        run: impl FnOnce(*mut *mut sys::cairn_object_array) -> *mut sys::cairn_status,
    ) -> Result<Vec<(String, Object)>> {
        array_entries(function, run)
    }

    /// A typed handle when the object is of that kind; the object back otherwise.
    pub fn downcast<T: ObjectType>(self) -> std::result::Result<T, Object> {
        if self.kind() == T::KIND {
            Ok(T::wrap(self))
        } else {
            Err(self)
        }
    }

    /// The object as a typed handle when it is of that kind.
    pub fn downcast_ref<T: ObjectType>(&self) -> Option<&T> {
        // SAFETY: every ObjectType is a #[repr(transparent)] wrapper of Object.
        (self.kind() == T::KIND).then(|| unsafe { &*(self as *const Object).cast::<T>() })
    }

    /// A second handle to the same object; what `Clone` does, with the error instead of a panic.
    pub fn share(&self) -> Result<Object> {
        // SAFETY: a live handle.
        unsafe { Object::share_raw(self.raw.as_ptr()) }
    }

    unsafe fn share_raw(raw: *const sys::cairn_object) -> Result<Object> {
        let mut out = ptr::null_mut();
        check(sys::cairn_object_share(raw, &mut out))?;
        Object::from_result(out, "cairn_object_share")
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_object {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the raw handle; the caller frees it with `cairn_object_free`.
    pub fn into_raw(self) -> *mut sys::cairn_object {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be a live object handle that nothing else frees (not one lent by an object array
    /// or a checkpoint's root).
    pub unsafe fn from_raw(raw: NonNull<sys::cairn_object>) -> Object {
        Object { raw }
    }

    pub(crate) fn from_result(raw: *mut sys::cairn_object, function: &str) -> Result<Object> {
        NonNull::new(raw)
            .map(|raw| Object { raw })
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but no object")))
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed.
        unsafe { sys::cairn_object_free(self.raw.as_ptr()) }
    }
}

impl Clone for Object {
    /// A second handle to the same object. Panics only if the library cannot allocate one.
    fn clone(&self) -> Object {
        self.share().unwrap_or_else(|e| panic!("cairn: cannot share an object handle: {e}"))
    }
}

impl AsRef<Object> for Object {
    fn as_ref(&self) -> &Object {
        self
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            ObjectKind::Variable => fmt::Debug::fmt(&Variable::ref_cast(self), f),
            ObjectKind::Module => fmt::Debug::fmt(&Module::ref_cast(self), f),
            ObjectKind::List => write!(f, "List(len {})", self.child_count()),
            ObjectKind::Dict => write!(f, "Dict(len {})", self.child_count()),
            kind => write!(f, "{kind:?}({} edges)", self.child_count()),
        }
    }
}

/// Runs a query returning an object array and takes a handle of its own to every entry
/// before the array (and the handles it lent) is freed.
pub(crate) fn array_entries(
    function: &str,
    run: impl FnOnce(*mut *mut sys::cairn_object_array) -> *mut sys::cairn_status,
) -> Result<Vec<(String, Object)>> {
    struct Array(*mut sys::cairn_object_array);
    impl Drop for Array {
        fn drop(&mut self) {
            // SAFETY: the array is ours; NULL is fine.
            unsafe { sys::cairn_object_array_free(self.0) }
        }
    }
    let mut out = ptr::null_mut();
    // SAFETY: `run` passes `out` to a query, which returns a status for us to free.
    unsafe { check(run(&mut out))? };
    let array = Array(out);
    let n = unsafe { sys::cairn_object_array_size(array.0) };
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: i < size; both are borrowed from the array, which lives until the end.
        let (entry, path) =
            unsafe { (sys::cairn_object_array_get(array.0, i), sys::cairn_object_array_path(array.0, i)) };
        let entry = NonNull::new(entry)
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: entry {i} of {n} is NULL")))?;
        // SAFETY: a borrowed live handle; share makes one we own.
        let object = unsafe { Object::share_raw(entry.as_ptr()) }?;
        entries.push((unsafe { owned_str(path) }, object));
    }
    Ok(entries)
}

/// A copy of a borrowed C string ("" for NULL).
///
/// # Safety
/// `s` is NULL or a live NUL-terminated string.
unsafe fn owned_str(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// A borrowed C string as `&str` for as long as `'a` ("" for NULL or invalid UTF-8; cairn's names
/// are validated UTF-8 from Rust strings or other bindings).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that lives for `'a`.
unsafe fn borrowed_str<'a>(s: *const c_char) -> &'a str {
    if s.is_null() {
        ""
    } else {
        CStr::from_ptr(s).to_str().unwrap_or("")
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A handle type of one object kind: [`Trackable`], [`Module`], [`Variable`], [`List`],
/// [`Dict`], [`crate::Optimizer`] or [`crate::Layer`]. Sealed.
pub trait ObjectType: sealed::Sealed + Deref<Target = Object> + Into<Object> + Sized {
    /// The kind of the objects this type refers to.
    const KIND: ObjectKind;
    #[doc(hidden)]
    fn wrap(object: Object) -> Self;
}

macro_rules! object_type {
    ($(#[$doc:meta])* $name:ident => $kind:ident) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[repr(transparent)]
        pub struct $name($crate::Object);

        impl $crate::object::sealed::Sealed for $name {}

        impl $crate::ObjectType for $name {
            const KIND: $crate::ObjectKind = $crate::ObjectKind::$kind;
            fn wrap(object: $crate::Object) -> Self {
                $name(object)
            }
        }

        impl $name {
            /// The handle as an [`Object`] (also what `Deref` gives).
            pub fn as_object(&self) -> &$crate::Object {
                &self.0
            }

            #[allow(dead_code)]
            fn ref_cast(object: &$crate::Object) -> &$name {
                // SAFETY: #[repr(transparent)] over Object.
                unsafe { &*(object as *const $crate::Object).cast::<$name>() }
            }
        }

        impl std::ops::Deref for $name {
            type Target = $crate::Object;
            fn deref(&self) -> &$crate::Object {
                &self.0
            }
        }

        impl AsRef<$crate::Object> for $name {
            fn as_ref(&self) -> &$crate::Object {
                &self.0
            }
        }

        impl From<$name> for $crate::Object {
            fn from(handle: $name) -> $crate::Object {
                handle.0
            }
        }

        impl TryFrom<$crate::Object> for $name {
            type Error = $crate::Error;
            /// INVALID_ARGUMENT when the object is of another kind.
            fn try_from(object: $crate::Object) -> $crate::Result<$name> {
                let kind = object.kind();
                object.downcast::<$name>().map_err(|_| {
                    $crate::Error::new(
                        $crate::Code::InvalidArgument,
                        format!("cairn: the object is a {kind:?}, not a {:?}", $crate::ObjectKind::$kind),
                    )
                })
            }
        }
    };
}
pub(crate) use object_type;

object_type! {
    /// A trackable (TensorFlow's AutoTrackable): an object whose attributes ([`Object::set`]) are
    /// tracked edges, kept in the order they were first set.
    Trackable => Trackable
}

object_type! {
    /// A module (tf.Module): a trackable with a name and a name scope for the variables created in
    /// it.
    Module => Module
}

object_type! {
    /// A variable (tf.Variable): a mutable slot holding an immutable tensor of a fixed dtype, shape
    /// and device.
    Variable => Variable
}

object_type! {
    /// A list (ListWrapper) whose elements are tracked edges "0", "1", ...
    List => List
}

object_type! {
    /// A dict (DictWrapper): string keys in insertion order, each a tracked edge. Set, get and
    /// delete entries with [`Object::set`], [`Object::get`] and [`Object::delete`].
    Dict => Dict
}

impl Trackable {
    /// A new trackable without edges. It keeps `ctx` alive.
    pub fn new(ctx: &Context) -> Result<Trackable> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_trackable_create(ctx.as_raw(), &mut out))? };
        Object::from_result(out, "cairn_trackable_create").map(Trackable)
    }
}

impl Module {
    /// A new module named `name` (non-empty, no '/' or ':'). Variables created with it as their
    /// scope are named `"<name>/<variable name>:0"`.
    pub fn new(ctx: &Context, name: &str) -> Result<Module> {
        Module::create(ctx, name, None)
    }

    /// A new module inside the name scope of `parent`: a module "m2" made in the scope of module
    /// "m1" has scope "m1/m2". The two are not linked by an edge.
    pub fn new_in_scope(ctx: &Context, name: &str, parent: &Module) -> Result<Module> {
        Module::create(ctx, name, Some(parent))
    }

    fn create(ctx: &Context, name: &str, parent: Option<&Module>) -> Result<Module> {
        crate::check_abi()?;
        let name = c_string(name, "Module::new", "name")?;
        let mut out = ptr::null_mut();
        let parent = parent.map_or(ptr::null(), |p| p.raw.as_ptr().cast_const());
        unsafe { check(sys::cairn_module_create_in_scope(ctx.as_raw(), name.as_ptr(), parent, &mut out))? };
        Object::from_result(out, "cairn_module_create").map(Module)
    }

    /// The module's name, e.g. "m2".
    pub fn name(&self) -> &str {
        // SAFETY: valid while any handle to the module lives, so for as long as &self.
        unsafe { borrowed_str(sys::cairn_module_name(self.raw.as_ptr())) }
    }

    /// The module's name scope, e.g. "m1/m2".
    pub fn scope(&self) -> &str {
        // SAFETY: as in name().
        unsafe { borrowed_str(sys::cairn_module_scope(self.raw.as_ptr())) }
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Module({:?}, {} edges)", self.scope(), self.child_count())
    }
}

/// Options of [`Variable::with_options`]: `VariableOptions::new().name("w").trainable(false).scope(&m)`.
#[derive(Clone, Debug, Default)]
pub struct VariableOptions<'a> {
    name: Option<String>,
    trainable: Option<bool>,
    scope: Option<&'a Module>,
}

impl<'a> VariableOptions<'a> {
    /// cairn.h's defaults (`cairn_variable_options_init`): named "Variable", trainable, no scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// The variable's name (non-empty, no ':'); default "Variable".
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Whether trainable-only queries include it; default true.
    pub fn trainable(mut self, trainable: bool) -> Self {
        self.trainable = Some(trainable);
        self
    }

    /// Names the variable `"<scope>/<name>:0"`. The variable does not keep the module.
    pub fn scope(mut self, module: &'a Module) -> Self {
        self.scope = Some(module);
        self
    }
}

impl Variable {
    /// A new variable named "Variable:0", trainable, holding `initial` (shared, not copied:
    /// tensors are immutable). Its dtype, shape and device are `initial`'s for life.
    pub fn new(ctx: &Context, initial: &Tensor) -> Result<Variable> {
        Variable::with_options(ctx, initial, VariableOptions::new())
    }

    /// A new variable with `options` (name, trainable, scope).
    pub fn with_options(ctx: &Context, initial: &Tensor, options: VariableOptions<'_>) -> Result<Variable> {
        let mut raw = crate::options::init(sys::cairn_variable_options_init)?;
        let name = options.name.as_deref().map(|n| c_string(n, "Variable::with_options", "name")).transpose()?;
        if let Some(name) = &name {
            raw.name = name.as_ptr();
        }
        if let Some(trainable) = options.trainable {
            raw.trainable = i32::from(trainable);
        }
        if let Some(scope) = options.scope {
            raw.scope = scope.raw.as_ptr();
        }
        let mut out = ptr::null_mut();
        // SAFETY: the options and what they point to outlive the call.
        unsafe { check(sys::cairn_variable_create(ctx.as_raw(), initial.as_raw(), &raw, &mut out))? };
        Object::from_result(out, "cairn_variable_create").map(Variable)
    }

    /// A snapshot of the value; later assignments do not change it (no copy is made).
    pub fn read(&self) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_variable_read(self.raw.as_ptr(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_variable_read")
    }

    /// Replaces the value; `value` must have the variable's dtype and shape. On error the value is
    /// unchanged.
    pub fn assign(&self, value: &Tensor) -> Result<()> {
        unsafe { check(sys::cairn_variable_assign(self.raw.as_ptr(), value.as_raw())) }
    }

    /// Adds `delta` (same dtype and shape, no broadcasting), atomically with respect to other
    /// writers.
    pub fn assign_add(&self, delta: &Tensor) -> Result<()> {
        unsafe { check(sys::cairn_variable_assign_add(self.raw.as_ptr(), delta.as_raw())) }
    }

    /// Subtracts `delta`, as [`Variable::assign_add`].
    pub fn assign_sub(&self, delta: &Tensor) -> Result<()> {
        unsafe { check(sys::cairn_variable_assign_sub(self.raw.as_ptr(), delta.as_raw())) }
    }

    /// The variable's name, e.g. "m1/m_v:0" or "Variable:0".
    pub fn name(&self) -> &str {
        // SAFETY: valid while any handle to the variable lives, so for as long as &self.
        unsafe { borrowed_str(sys::cairn_variable_name(self.raw.as_ptr())) }
    }

    /// Whether trainable-only queries include it.
    pub fn trainable(&self) -> bool {
        unsafe { sys::cairn_variable_trainable(self.raw.as_ptr()) == 1 }
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        DType::from_raw(unsafe { sys::cairn_variable_dtype(self.raw.as_ptr()) }).unwrap_or(DType::Invalid)
    }

    /// The shape (through a read, which does not copy).
    pub fn shape(&self) -> Result<Vec<i64>> {
        Ok(self.read()?.shape())
    }
}

impl fmt::Debug for Variable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = self.shape().unwrap_or_default();
        write!(f, "Variable({:?}, {} {:?})", self.name(), self.dtype(), shape)
    }
}

impl List {
    /// A new, empty list.
    pub fn new(ctx: &Context) -> Result<List> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_list_create(ctx.as_raw(), &mut out))? };
        Object::from_result(out, "cairn_list_create").map(List)
    }

    /// Appends `item` as edge `"<old len>"`; the list takes its own reference. A checkpoint value
    /// waiting for that edge is restored into `item` before this returns (its error, if any, is
    /// returned; the item stays appended).
    pub fn append(&self, item: impl AsRef<Object>) -> Result<()> {
        let item = item.as_ref();
        unsafe { check(sys::cairn_list_append(self.raw.as_ptr(), item.raw.as_ptr())) }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        unsafe { sys::cairn_list_size(self.raw.as_ptr()) }
    }

    /// Whether the list has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `index`; OUT_OF_RANGE for index >= len. (Shadows [`Object::get`], which takes the
    /// decimal edge name.)
    pub fn get(&self, index: usize) -> Result<Object> {
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_list_get(self.raw.as_ptr(), index, &mut out))? };
        Object::from_result(out, "cairn_list_get")
    }

    /// Replaces element `index` (< len) with `item`. TensorFlow refuses to checkpoint a list whose
    /// elements were replaced or deleted. (Shadows [`Object::set`].)
    pub fn set(&self, index: usize, item: impl AsRef<Object>) -> Result<()> {
        let item = item.as_ref();
        unsafe { check(sys::cairn_list_set(self.raw.as_ptr(), index, item.raw.as_ptr())) }
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl Dict {
    /// A new, empty dict.
    pub fn new(ctx: &Context) -> Result<Dict> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_dict_create(ctx.as_raw(), &mut out))? };
        Object::from_result(out, "cairn_dict_create").map(Dict)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.child_count()
    }

    /// Whether the dict has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> Result<Vec<String>> {
        Ok(self.children()?.into_iter().map(|(key, _)| key).collect())
    }
}

impl fmt::Debug for Dict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Debug for Trackable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
