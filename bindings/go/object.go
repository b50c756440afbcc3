package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Object is a handle to a tracked object (TensorFlow's Trackable): a trackable, module, variable,
// list or dict, joined to others by named, ordered edges that checkpoints follow. A handle holds
// one reference to its object; Close drops it. Edges hold their own references, so handles may be
// closed in any order, and two handles may refer to one object (Same tells). An object keeps the
// context it was made from alive.
//
// Module, Variable, List and Dict are views of an Object with the methods of their kind; they
// share its handle (closing the view closes the Object). Any of them is a Tracked and can be put
// on an edge.
//
// Objects may be read and written from several goroutines at once; Close must not race with
// other uses of the same handle.
type Object struct {
	ptr *C.cairn_object
	// owner is set on a checkpoint's root: ptr is borrowed from the checkpoint and valid while
	// owner is open. Such an Object holds no reference and its Close does nothing.
	owner *Checkpoint
	// lent is set on the model a callback hook receives: ptr is the runtime's, valid during the
	// hook (cleared after it); Close does nothing.
	lent bool
}

// Tracked is what can be put on an edge: *Object, *Module, *Variable, *List or *Dict.
type Tracked interface {
	object() *Object
}

func (o *Object) object() *Object { return o }

// newObject takes ownership of a C object handle.
func newObject(p *C.cairn_object) *Object {
	o := &Object{ptr: p}
	runtime.SetFinalizer(o, (*Object).Close)
	return o
}

// Close drops the handle's reference; the object goes when nothing else refers to it. Closing
// twice does nothing, and so does closing a checkpoint's Root.
func (o *Object) Close() {
	if o == nil || o.ptr == nil || o.owner != nil || o.lent {
		return
	}
	runtime.SetFinalizer(o, nil)
	cObjectFree(o.ptr)
	o.ptr = nil
}

// handle is the C object, NULL for a nil or closed Object or the root of a closed checkpoint (the
// C API then reports the misuse).
func (o *Object) handle() *C.cairn_object {
	if o == nil || (o.owner != nil && o.owner.ptr == nil) {
		return nil
	}
	return o.ptr
}

// handleOf is t's C object; NULL for nil.
func handleOf(t Tracked) *C.cairn_object {
	if t == nil {
		return nil
	}
	return t.object().handle()
}

// NewTrackable creates a trackable: an object whose attributes (Set) are tracked edges, kept in
// the order they were first set.
func NewTrackable(ctx *Context) (*Object, error) {
	if err := checkOpen("NewTrackable", "context", ctx); err != nil {
		return nil, err
	}
	var out *C.cairn_object
	err := cTrackableCreate(ctx.handle(), &out)
	runtime.KeepAlive(ctx)
	return objectOrError(out, err)
}

func objectOrError(p *C.cairn_object, err error) (*Object, error) {
	if err != nil {
		return nil, err
	}
	return newObject(p), nil
}

// Kind is the object's kind; ObjectKindInvalid after Close.
func (o *Object) Kind() ObjectKind {
	k := ObjectKind(cObjectKindOf(o.handle()))
	runtime.KeepAlive(o)
	return k
}

// String is "Object(<kind>)", or "Object(closed)".
func (o *Object) String() string {
	if o.handle() == nil {
		return "Object(closed)"
	}
	return fmt.Sprintf("Object(%v)", o.Kind())
}

// Same reports whether o and other refer to the same object.
func (o *Object) Same(other Tracked) bool {
	same := cObjectSame(o.handle(), handleOf(other)) != 0
	runtime.KeepAlive(o)
	runtime.KeepAlive(other)
	return same
}

// Share returns a second handle to the object, closed independently.
func (o *Object) Share() (*Object, error) {
	if err := checkOpen("Object.Share", "object", o); err != nil {
		return nil, err
	}
	var out *C.cairn_object
	err := cObjectShare(o.handle(), &out)
	runtime.KeepAlive(o)
	return objectOrError(out, err)
}

// NumChildren is the number of tracked edges (0 for a variable).
func (o *Object) NumChildren() int {
	n := int(cObjectChildCount(o.handle()))
	runtime.KeepAlive(o)
	return n
}

// Set creates or replaces the tracked edge name: an attribute of a trackable or module, a key of a
// dict, or an existing index ("0", "1", ...) of a list. A replaced edge keeps its position; a new
// one goes last. A checkpoint value waiting for this edge is restored into child before Set
// returns (its error is Set's; the edge stays).
func (o *Object) Set(name string, child Tracked) error {
	if err := checkOpen("Object.Set", "object", o, "child", child); err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := cObjectSet(o.handle(), cname, handleOf(child))
	runtime.KeepAlive(o)
	runtime.KeepAlive(child)
	return err
}

// SetUntracked keeps child alive under name without tracking it: it is never walked, listed or
// checkpointed. Only trackables and modules have untracked references.
func (o *Object) SetUntracked(name string, child Tracked) error {
	if err := checkOpen("Object.SetUntracked", "object", o, "child", child); err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := cObjectSetUntracked(o.handle(), cname, handleOf(child))
	runtime.KeepAlive(o)
	runtime.KeepAlive(child)
	return err
}

// Get returns a new handle to the child at name, tracked or untracked; a list names its elements
// "0", "1", ... The error is NOT_FOUND when there is no such child.
func (o *Object) Get(name string) (*Object, error) {
	if err := checkOpen("Object.Get", "object", o); err != nil {
		return nil, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out *C.cairn_object
	err := cObjectGet(o.handle(), cname, &out)
	runtime.KeepAlive(o)
	return objectOrError(out, err)
}

// Delete removes the edge name (tracked or untracked). Deleting list element i moves the later
// elements down one index.
func (o *Object) Delete(name string) error {
	if err := checkOpen("Object.Delete", "object", o); err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := cObjectDelete(o.handle(), cname)
	runtime.KeepAlive(o)
	return err
}

// AsModule is o as a Module, sharing o's handle; an error unless o is a module.
func (o *Object) AsModule() (*Module, error) {
	if err := o.expectKind("Object.AsModule", ObjectKindModule); err != nil {
		return nil, err
	}
	return &Module{o}, nil
}

// AsVariable is o as a Variable, sharing o's handle; an error unless o is a variable.
func (o *Object) AsVariable() (*Variable, error) {
	if err := o.expectKind("Object.AsVariable", ObjectKindVariable); err != nil {
		return nil, err
	}
	return &Variable{o}, nil
}

// AsList is o as a List, sharing o's handle; an error unless o is a list.
func (o *Object) AsList() (*List, error) {
	if err := o.expectKind("Object.AsList", ObjectKindList); err != nil {
		return nil, err
	}
	return &List{o}, nil
}

// AsDict is o as a Dict, sharing o's handle; an error unless o is a dict.
func (o *Object) AsDict() (*Dict, error) {
	if err := o.expectKind("Object.AsDict", ObjectKindDict); err != nil {
		return nil, err
	}
	return &Dict{o}, nil
}

func (o *Object) expectKind(fn string, kind ObjectKind) error {
	if err := checkOpen(fn, "object", o); err != nil {
		return err
	}
	if have := o.Kind(); have != kind {
		return newError(CodeInvalidArgument, fmt.Sprintf("%s: the object is a %v, not a %v", fn, have, kind))
	}
	return nil
}

// ---- Queries (tf.Module's) ----

// PathObject is an object found by a query with the path that reached it: edge names joined by
// '/', e.g. "sub/v" ("" for a walk's root). The Object is a handle of its own; close it.
type PathObject struct {
	Path   string
	Object *Object
}

// Children lists the tracked edges in order (creation order; index order for lists), each with
// its edge name as the path.
func (o *Object) Children() ([]PathObject, error) {
	return o.query(cObjectChildren)
}

// Flatten is tf.Module._flatten(with_path=True): every (path, object) pair under o, so an object
// reachable by several paths appears once per path.
func (o *Object) Flatten() ([]PathObject, error) {
	return o.query(cObjectFlatten)
}

// Walk lists every object reachable from o along tracked edges in checkpoint order: o first
// (path ""), then breadth-first in edge order, each object once with the first path reaching it.
func (o *Object) Walk() ([]PathObject, error) {
	return o.query(cObjectWalk)
}

// Variables is tf.Module.variables (trainableOnly false) or .trainable_variables (true): o's own
// variables sorted by attribute name, then those of its submodules, depth-first, each once.
func (o *Object) Variables(trainableOnly bool) ([]*Variable, error) {
	flag := C.int(0)
	if trainableOnly {
		flag = 1
	}
	found, err := o.query(func(root *C.cairn_object, out **C.cairn_object_array) error {
		return cObjectVariables(root, flag, out)
	})
	if err != nil {
		return nil, err
	}
	vars := make([]*Variable, len(found))
	for i, f := range found {
		vars[i] = &Variable{f.Object}
	}
	return vars, nil
}

// Submodules is tf.Module.submodules: every module reachable from o (o excluded), each once.
func (o *Object) Submodules() ([]*Module, error) {
	found, err := o.query(cObjectSubmodules)
	if err != nil {
		return nil, err
	}
	mods := make([]*Module, len(found))
	for i, f := range found {
		mods[i] = &Module{f.Object}
	}
	return mods, nil
}

// query runs an array query and hands out a shared handle per entry, freeing the array.
func (o *Object) query(run func(*C.cairn_object, **C.cairn_object_array) error) ([]PathObject, error) {
	var arr *C.cairn_object_array
	err := run(o.handle(), &arr)
	runtime.KeepAlive(o)
	if err != nil {
		return nil, err
	}
	defer cObjectArrayFree(arr)
	found := make([]PathObject, int(cObjectArraySize(arr)))
	for i := range found {
		var shared *C.cairn_object
		if err := cObjectShare(cObjectArrayGet(arr, C.size_t(i)), &shared); err != nil {
			for _, f := range found[:i] {
				f.Object.Close()
			}
			return nil, err
		}
		found[i] = PathObject{Path: C.GoString(cObjectArrayPath(arr, C.size_t(i))), Object: newObject(shared)}
	}
	return found, nil
}

// ---- Modules ----

// Module is a tf.Module: a trackable with a name and a name scope. Variables created with a
// module as their scope (WithScope) are named "<scope>/<name>:0".
type Module struct {
	*Object
}

func (m *Module) object() *Object {
	if m == nil {
		return nil
	}
	return m.Object
}

// ModuleOption configures NewModule.
type ModuleOption func(*moduleConfig)

type moduleConfig struct {
	parent *Module
}

// WithParentScope creates the module inside parent's name scope: a module "m2" created in the
// scope of module "m1" has scope "m1/m2". It adds no edge between the two.
func WithParentScope(parent *Module) ModuleOption {
	return func(c *moduleConfig) { c.parent = parent }
}

// NewModule creates a module. name must be non-empty without '/' or ':'; "" means "module".
func NewModule(ctx *Context, name string, options ...ModuleOption) (*Module, error) {
	if err := checkOpen("NewModule", "context", ctx); err != nil {
		return nil, err
	}
	var cfg moduleConfig
	for _, set := range options {
		set(&cfg)
	}
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var out *C.cairn_object
	var err error
	if cfg.parent != nil {
		if err := checkOpen("NewModule", "parent scope", cfg.parent); err != nil {
			return nil, err
		}
		err = cModuleCreateInScope(ctx.handle(), cname, handleOf(cfg.parent), &out)
	} else {
		err = cModuleCreate(ctx.handle(), cname, &out)
	}
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(cfg.parent)
	if err != nil {
		return nil, err
	}
	return &Module{newObject(out)}, nil
}

// Name is the module's name, e.g. "m2"; "" for a closed handle.
func (m *Module) Name() string {
	s := C.GoString(cModuleName(handleOf(m)))
	runtime.KeepAlive(m)
	return s
}

// Scope is the module's name scope, e.g. "m1/m2"; "" for a closed handle.
func (m *Module) Scope() string {
	s := C.GoString(cModuleScope(handleOf(m)))
	runtime.KeepAlive(m)
	return s
}

// ---- Variables ----

// Variable is a tf.Variable: a mutable value of a fixed dtype, shape and device. Reads return
// snapshots that later assignments do not change; assignments to one variable are atomic.
type Variable struct {
	*Object
}

func (v *Variable) object() *Object {
	if v == nil {
		return nil
	}
	return v.Object
}

// VariableOption configures NewVariable.
type VariableOption func(*variableConfig)

type variableConfig struct {
	name      *string
	trainable *bool
	scope     *Module
}

// WithVariableName names the variable (default "Variable"): non-empty, without ':'.
func WithVariableName(name string) VariableOption {
	return func(c *variableConfig) { c.name = &name }
}

// WithTrainable says whether trainable-only queries include the variable (default true).
func WithTrainable(trainable bool) VariableOption {
	return func(c *variableConfig) { c.trainable = &trainable }
}

// WithScope names the variable "<scope>/<name>:0" after a module's name scope. The variable does
// not keep the module.
func WithScope(scope *Module) VariableOption {
	return func(c *variableConfig) { c.scope = scope }
}

// NewVariable creates a variable holding initial (shared, not copied: tensors are immutable); its
// dtype, shape and device are the variable's for life. Any dtype but String.
func NewVariable(ctx *Context, initial *Tensor, options ...VariableOption) (*Variable, error) {
	if err := checkOpen("NewVariable", "context", ctx, "initial value", initial); err != nil {
		return nil, err
	}
	var cfg variableConfig
	for _, set := range options {
		set(&cfg)
	}
	opts := (*C.cairn_variable_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_variable_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cVariableOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	if cfg.name != nil {
		name := C.CString(*cfg.name)
		defer C.free(unsafe.Pointer(name))
		opts.name = name
	}
	if cfg.trainable != nil && !*cfg.trainable {
		opts.trainable = 0
	}
	if cfg.scope != nil {
		if err := checkOpen("NewVariable", "scope", cfg.scope); err != nil {
			return nil, err
		}
		opts.scope = handleOf(cfg.scope)
	}
	var out *C.cairn_object
	err := cVariableCreate(ctx.handle(), initial.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(initial)
	runtime.KeepAlive(cfg.scope)
	if err != nil {
		return nil, err
	}
	return &Variable{newObject(out)}, nil
}

// Read returns a snapshot of the variable's value (no copy); close it when done.
func (v *Variable) Read() (*Tensor, error) {
	if err := checkOpen("Variable.Read", "variable", v); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cVariableRead(handleOf(v), &out)
	runtime.KeepAlive(v)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// ReadValue copies the variable's current elements into a new slice; E must match its dtype.
func ReadValue[E Element](v *Variable) ([]E, error) {
	t, err := v.Read()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return Read[E](t)
}

// Assign replaces the value with value, which must have the variable's dtype and shape (a value
// on another device is copied). On error the value is unchanged.
func (v *Variable) Assign(value *Tensor) error {
	return v.update("Variable.Assign", cVariableAssign, value)
}

// AssignAdd adds delta (the variable's dtype and shape; no broadcasting), atomically.
func (v *Variable) AssignAdd(delta *Tensor) error {
	return v.update("Variable.AssignAdd", cVariableAssignAdd, delta)
}

// AssignSub subtracts delta (the variable's dtype and shape; no broadcasting), atomically.
func (v *Variable) AssignSub(delta *Tensor) error {
	return v.update("Variable.AssignSub", cVariableAssignSub, delta)
}

func (v *Variable) update(fn string, op func(*C.cairn_object, *C.cairn_tensor) error, t *Tensor) error {
	if err := checkOpen(fn, "variable", v, "value", t); err != nil {
		return err
	}
	err := op(handleOf(v), t.handle())
	runtime.KeepAlive(v)
	runtime.KeepAlive(t)
	return err
}

// Name is the variable's name, e.g. "m1/m_v:0" or "Variable:0"; "" for a closed handle.
func (v *Variable) Name() string {
	s := C.GoString(cVariableName(handleOf(v)))
	runtime.KeepAlive(v)
	return s
}

// Trainable reports whether trainable-only queries include the variable.
func (v *Variable) Trainable() bool {
	t := cVariableTrainable(handleOf(v)) == 1
	runtime.KeepAlive(v)
	return t
}

// DType is the variable's dtype; InvalidDType for a closed handle.
func (v *Variable) DType() DType {
	d := DType(cVariableDType(handleOf(v)))
	runtime.KeepAlive(v)
	return d
}

// Shape is the variable's shape (read from a snapshot, which copies nothing).
func (v *Variable) Shape() ([]int64, error) {
	t, err := v.Read()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Shape(), nil
}

// ---- Lists and dicts ----

// List is a ListWrapper: its elements are tracked edges "0", "1", ... (Get("1") is At(1)).
type List struct {
	*Object
}

func (l *List) object() *Object {
	if l == nil {
		return nil
	}
	return l.Object
}

// NewList creates an empty list.
func NewList(ctx *Context) (*List, error) {
	if err := checkOpen("NewList", "context", ctx); err != nil {
		return nil, err
	}
	var out *C.cairn_object
	err := cListCreate(ctx.handle(), &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &List{newObject(out)}, nil
}

// Append adds item as the last element. A checkpoint value waiting for that element is restored
// into item before Append returns (its error is Append's; the item stays appended).
func (l *List) Append(item Tracked) error {
	if err := checkOpen("List.Append", "list", l, "item", item); err != nil {
		return err
	}
	err := cListAppend(handleOf(l), handleOf(item))
	runtime.KeepAlive(l)
	runtime.KeepAlive(item)
	return err
}

// Len is the number of elements.
func (l *List) Len() int {
	n := int(cListSize(handleOf(l)))
	runtime.KeepAlive(l)
	return n
}

// At returns a new handle to element i; OUT_OF_RANGE for i >= Len().
func (l *List) At(i int) (*Object, error) {
	if err := checkOpen("List.At", "list", l); err != nil {
		return nil, err
	}
	if i < 0 {
		return nil, newError(CodeOutOfRange, fmt.Sprintf("List.At: index %d is negative", i))
	}
	var out *C.cairn_object
	err := cListGet(handleOf(l), C.size_t(i), &out)
	runtime.KeepAlive(l)
	return objectOrError(out, err)
}

// Replace puts item at index i (< Len()). TensorFlow refuses to checkpoint a list whose elements
// were replaced or deleted.
func (l *List) Replace(i int, item Tracked) error {
	if err := checkOpen("List.Replace", "list", l, "item", item); err != nil {
		return err
	}
	if i < 0 {
		return newError(CodeOutOfRange, fmt.Sprintf("List.Replace: index %d is negative", i))
	}
	err := cListSet(handleOf(l), C.size_t(i), handleOf(item))
	runtime.KeepAlive(l)
	runtime.KeepAlive(item)
	return err
}

// Dict is a DictWrapper: string keys in insertion order, each a tracked edge named by its key.
// Set, Get and Delete work by key; NumChildren is its size.
type Dict struct {
	*Object
}

func (d *Dict) object() *Object {
	if d == nil {
		return nil
	}
	return d.Object
}

// NewDict creates an empty dict.
func NewDict(ctx *Context) (*Dict, error) {
	if err := checkOpen("NewDict", "context", ctx); err != nil {
		return nil, err
	}
	var out *C.cairn_object
	err := cDictCreate(ctx.handle(), &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &Dict{newObject(out)}, nil
}
