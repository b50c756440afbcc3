//! Tensors: immutable values with a dtype, a shape and a device buffer.

use std::ffi::CStr;
use std::fmt;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::{Code, Context, DType, Element, Error, Result};

/// An immutable tensor. Dropping it frees the handle; its data lives on while other tensors share
/// it (`Clone` makes a second handle to the same data, without copying). A tensor does not borrow the context it was made with: it stays valid after the context is
/// dropped. Tensors are `Send` and `Sync` (the C API makes them immutable and readable from any thread).
#[repr(transparent)]
pub struct Tensor {
    raw: NonNull<sys::cairn_tensor>,
}

// SAFETY: cairn.h: "A cairn_tensor is immutable and may be read from any thread."
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

impl Tensor {
    /// A tensor of `shape` holding a copy of `data` (row-major). An empty `shape` makes a scalar.
    /// INVALID_ARGUMENT when a dimension is negative or `data.len()` is not the product of `shape`
    /// (`Tensor::new: 2 values for shape [3] (needs 3)`).
    pub fn new<T: Element>(ctx: &Context, data: &[T], shape: &[i64]) -> Result<Tensor> {
        let needed = element_count(shape, "Tensor::new")?;
        if needed != Some(data.len()) {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("Tensor::new: {} values for shape {shape:?} (needs {})", data.len(), count_text(needed)),
            ));
        }
        // SAFETY: T has the layout of T::DTYPE, so data is nbytes of valid elements.
        unsafe { Self::create(ctx, T::DTYPE, shape, data.as_ptr().cast(), std::mem::size_of_val(data)) }
    }

    /// A scalar (rank 0) tensor.
    pub fn scalar<T: Element>(ctx: &Context, value: T) -> Result<Tensor> {
        Self::new(ctx, &[value], &[])
    }

    /// A tensor of any dtype from its raw bytes (row-major, native byte order). INVALID_ARGUMENT
    /// when a dimension is negative or `bytes.len()` is not the dtype's size times the product of
    /// `shape` (`Tensor::from_bytes: 8 bytes for float32 shape [3] (needs 12)`).
    pub fn from_bytes(ctx: &Context, dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor> {
        let size = dtype.size();
        if size == 0 {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("Tensor::from_bytes: {dtype} tensors cannot be made from bytes"),
            ));
        }
        let needed = element_count(shape, "Tensor::from_bytes")?.and_then(|n| n.checked_mul(size));
        if needed != Some(bytes.len()) {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "Tensor::from_bytes: {} bytes for {dtype} shape {shape:?} (needs {})",
                    bytes.len(),
                    count_text(needed)
                ),
            ));
        }
        // SAFETY: the C API checks nbytes against dtype and shape and only reads that many bytes.
        unsafe { Self::create(ctx, dtype, shape, bytes.as_ptr().cast(), bytes.len()) }
    }

    // The C API checks the sizes again; the checks above word the error in this binding's terms.
    unsafe fn create(
        ctx: &Context,
        dtype: DType,
        shape: &[i64],
        data: *const std::ffi::c_void,
        nbytes: usize,
    ) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        let data = if nbytes == 0 { ptr::null() } else { data };
        check(sys::cairn_tensor_create(
            ctx.as_raw(),
            dtype.to_raw(),
            shape.as_ptr(),
            shape.len(),
            data,
            nbytes,
            &mut out,
        ))?;
        Tensor::from_raw_result(out, "cairn_tensor_create")
    }

    /// The dtype. A dtype this binding does not know reads as `DType::Invalid`.
    pub fn dtype(&self) -> DType {
        // SAFETY: self.raw is a live tensor handle (here and in the accessors below).
        DType::from_raw(unsafe { sys::cairn_tensor_dtype(self.raw.as_ptr()) }).unwrap_or(DType::Invalid)
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        unsafe { sys::cairn_tensor_rank(self.raw.as_ptr()) }
    }

    /// The size of dimension `axis`; `None` for an axis >= rank.
    pub fn dim(&self, axis: usize) -> Option<i64> {
        let d = unsafe { sys::cairn_tensor_dim(self.raw.as_ptr(), axis) };
        (d >= 0).then_some(d)
    }

    /// The dimensions.
    pub fn shape(&self) -> Vec<i64> {
        (0..self.rank()).map(|axis| unsafe { sys::cairn_tensor_dim(self.raw.as_ptr(), axis) }).collect()
    }

    /// The number of elements (1 for a scalar).
    pub fn num_elements(&self) -> usize {
        unsafe { sys::cairn_tensor_num_elements(self.raw.as_ptr()) as usize }
    }

    /// The size of the data in bytes.
    pub fn nbytes(&self) -> usize {
        unsafe { sys::cairn_tensor_nbytes(self.raw.as_ptr()) }
    }

    /// The name of the device holding the data, e.g. "cpu". Borrowed from the tensor, so it
    /// cannot outlive it:
    ///
    /// ```compile_fail
    /// # use cairn::{Context, Tensor};
    /// let ctx = Context::new().unwrap();
    /// let device: &str = {
    ///     let t = Tensor::new(&ctx, &[1.0f32], &[1]).unwrap();
    ///     t.device() // error: `t` does not live long enough
    /// };
    /// ```
    pub fn device(&self) -> &str {
        // SAFETY: the C API returns a string that lives as long as the tensor.
        unsafe { CStr::from_ptr(sys::cairn_tensor_device(self.raw.as_ptr())) }.to_str().unwrap_or("")
    }

    /// Copies the data to host memory as a vector of `T`, waiting for the device when needed.
    /// Errors with INVALID_ARGUMENT when the tensor's dtype is not `T::DTYPE`.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dtype = self.dtype();
        if dtype != T::DTYPE {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "Tensor::to_vec: the tensor is {dtype}{:?} but {} holds {}",
                    self.shape(),
                    std::any::type_name::<T>(),
                    T::DTYPE
                ),
            ));
        }
        // SAFETY: cairn_tensor_read writes all nbytes when it succeeds.
        unsafe { T::read_vec(self.num_elements(), |dst, nbytes| self.read_into(dst, nbytes)) }
    }

    /// Copies the data to host memory as raw bytes (row-major, native byte order).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        // SAFETY: as in to_vec.
        unsafe { u8::read_vec(self.nbytes(), |dst, nbytes| self.read_into(dst, nbytes)) }
    }

    fn read_into(&self, dst: *mut u8, nbytes: usize) -> Result<()> {
        // SAFETY: dst has room for nbytes bytes; the C API checks nbytes against the tensor.
        unsafe { check(sys::cairn_tensor_read(self.raw.as_ptr(), dst.cast(), nbytes)) }
    }

    /// The same value on `device` ("cpu", "vulkan", "vulkan:N"). On the device the tensor is
    /// already on, the new tensor shares this one's buffer.
    pub fn copy_to_device(&self, ctx: &Context, device: &str) -> Result<Tensor> {
        let device = c_string(device, "Tensor::copy_to_device", "device")?;
        let mut out = ptr::null_mut();
        // SAFETY: live handles; `device` outlives the call.
        unsafe { check(sys::cairn_tensor_copy_to_device(ctx.as_raw(), self.raw.as_ptr(), device.as_ptr(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_tensor_copy_to_device")
    }

    /// A second handle to the same immutable value: no copy, no context (`cairn_tensor_share`).
    /// What `Clone` does, with the error instead of a panic.
    pub fn share(&self) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: a live handle; `out` receives a new one.
        unsafe { check(sys::cairn_tensor_share(self.raw.as_ptr(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_tensor_share")
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_tensor {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the raw handle; the caller frees it with `cairn_tensor_free`.
    pub fn into_raw(self) -> *mut sys::cairn_tensor {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be a live tensor handle that nothing else frees.
    pub unsafe fn from_raw(raw: NonNull<sys::cairn_tensor>) -> Tensor {
        Tensor { raw }
    }

    /// A handle the C API just returned alongside a NULL status.
    pub(crate) fn from_raw_result(raw: *mut sys::cairn_tensor, function: &str) -> Result<Tensor> {
        NonNull::new(raw)
            .map(|raw| Tensor { raw })
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but no tensor")))
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed.
        unsafe { sys::cairn_tensor_free(self.raw.as_ptr()) }
    }
}

impl Clone for Tensor {
    /// A second handle to the same value (no copy). Panics only if the library cannot allocate one.
    fn clone(&self) -> Tensor {
        self.share().unwrap_or_else(|e| panic!("cairn: cannot share a tensor handle: {e}"))
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor({} {:?} on {})", self.dtype(), self.shape(), self.device())
    }
}

/// The product of `shape` (`None` when it overflows); INVALID_ARGUMENT naming `function` for a
/// negative dimension.
fn element_count(shape: &[i64], function: &str) -> Result<Option<usize>> {
    let mut n = Some(1usize);
    for &d in shape {
        let d = usize::try_from(d).map_err(|_| {
            Error::new(Code::InvalidArgument, format!("{function}: negative dimension {d} in shape {shape:?}"))
        })?;
        n = n.and_then(|n| n.checked_mul(d));
    }
    Ok(n)
}

fn count_text(n: Option<usize>) -> String {
    n.map_or_else(|| "more than fit in memory".to_string(), |n| n.to_string())
}
