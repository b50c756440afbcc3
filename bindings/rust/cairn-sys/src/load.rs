//! Loading libcairn at run time: `dlopen` of one file, `dlsym` of every function into the table
//! [`Api`](crate::Api), once per process. Written by hand; the table and the wrappers that call
//! through it are generated (see the crate documentation for why this crate does not link
//! libcairn).

use std::ffi::{c_char, c_int, c_void, CStr, CString, OsStr};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::Api;

/// The environment variable naming the library file to load (e.g.
/// `/opt/cairn/lib/libcairn.so.1`) when the program has not called [`load`]; it overrides
/// [`BUILT_WITH`].
pub const LIBRARY_PATH_ENV: &str = "CAIRN_LIBRARY_PATH";

/// The absolute path of the library the build script found (through pkg-config or
/// `CAIRN_LIB_DIR`); `None` with the `load-dynamic` feature, which needs no library to build.
pub const BUILT_WITH: Option<&str> = option_env!("CAIRN_SYS_LIBRARY");

/// The file name the dynamic loader searches for (LD_LIBRARY_PATH, the system directories) when
/// neither [`LIBRARY_PATH_ENV`] nor [`BUILT_WITH`] names a file.
const SONAME: &str = "libcairn.so.1";

/// Why libcairn could not be loaded: no such file, not a Cairn library, a symbol missing, or
/// another ABI version. Its `Display` names the file and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    path: String,
    reason: String,
}

impl LoadError {
    fn new(path: &Path, reason: impl Into<String>) -> LoadError {
        LoadError { path: path.display().to_string(), reason: reason.into() }
    }

    /// The file that was tried.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What was wrong with it.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot load libcairn from {}: {}", self.path, self.reason)
    }
}

impl std::error::Error for LoadError {}

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlclose(handle: *mut c_void) -> c_int;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;

/// The loaded table; null until a load succeeds, then never changes (the library stays loaded).
static API: AtomicPtr<Api> = AtomicPtr::new(ptr::null_mut());
/// Serializes loads and remembers where the table came from.
static LOADED_FROM: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The function table; loads the [default library](default_library) on first use. Panics when
/// that fails: a program calling the raw functions must call [`load`] or [`load_default`] first to
/// get the failure as a `Result` (the `cairn` crate does).
#[inline(always)]
pub(crate) fn api() -> &'static Api {
    let api = API.load(Ordering::Acquire);
    if api.is_null() {
        api_slow()
    } else {
        // SAFETY: set once from a leaked Box and never freed.
        unsafe { &*api }
    }
}

#[cold]
#[inline(never)]
fn api_slow() -> &'static Api {
    if let Err(e) = load_default() {
        panic!("cairn-sys: {e} (call cairn_sys::load or load_default first to handle this as an error)");
    }
    // SAFETY: load_default succeeded, so the pointer is set.
    unsafe { &*API.load(Ordering::Acquire) }
}

/// The file [`load_default`] loads: `$CAIRN_LIBRARY_PATH` when set, else [`BUILT_WITH`], else
/// `libcairn.so.1` searched by the dynamic loader.
pub fn default_library() -> PathBuf {
    match std::env::var_os(LIBRARY_PATH_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(BUILT_WITH.unwrap_or(SONAME)),
    }
}

/// Loads [the default library](default_library) unless a library is loaded already. Every
/// constructor of the `cairn` crate calls this.
pub fn load_default() -> Result<(), LoadError> {
    if !API.load(Ordering::Acquire).is_null() {
        return Ok(());
    }
    load(default_library())
}

/// Loads libcairn from `path` (a file; a name without `/` is searched by the dynamic loader), checks
/// that it is the ABI this crate was generated for (`cairn_abi_version`) and resolves every
/// function. Once a load succeeded the library stays for the life of the process: loading the same
/// path again is `Ok`, another path is an error. A failed load leaves nothing behind, so the
/// program may try another path.
pub fn load(path: impl AsRef<Path>) -> Result<(), LoadError> {
    let path = path.as_ref();
    let mut loaded = LOADED_FROM.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(from) = loaded.as_ref() {
        return if from == path {
            Ok(())
        } else {
            Err(LoadError::new(
                path,
                format!("libcairn is already loaded from {} (a process loads it once)", from.display()),
            ))
        };
    }
    let api = open(path)?;
    API.store(Box::into_raw(Box::new(api)), Ordering::Release);
    *loaded = Some(path.to_path_buf());
    Ok(())
}

/// Where the loaded library came from; `None` before a successful load.
pub fn loaded_path() -> Option<PathBuf> {
    LOADED_FROM.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn open(path: &Path) -> Result<Api, LoadError> {
    let c_path =
        CString::new(path_bytes(path.as_os_str())).map_err(|_| LoadError::new(path, "the path contains a NUL byte"))?;
    // SAFETY: a NUL-terminated path; dlerror reads this thread's last error.
    let lib = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW) };
    if lib.is_null() {
        return Err(LoadError::new(path, last_dl_error()));
    }
    // SAFETY: `lib` is a live handle; on every error path it is closed exactly once.
    unsafe {
        let abi = symbol(lib, c"cairn_abi_version").map_err(|_| {
            dlclose(lib);
            LoadError::new(path, "it has no cairn_abi_version: not a Cairn library")
        })?;
        let abi: unsafe extern "C" fn() -> u32 = std::mem::transmute(abi);
        let version = abi();
        if version != crate::CAIRN_ABI_VERSION {
            dlclose(lib);
            return Err(LoadError::new(
                path,
                format!(
                    "it has ABI version {version}, but this binding was generated for ABI version {}",
                    crate::CAIRN_ABI_VERSION
                ),
            ));
        }
        Api::resolve(lib).map_err(|missing| {
            dlclose(lib);
            LoadError::new(path, format!("it has no function {missing} (an older library than the binding?)"))
        })
    }
}

/// `dlsym`; `Err(name)` when the library does not define it.
///
/// # Safety
/// `lib` must be a live dlopen handle.
pub(crate) unsafe fn symbol(lib: *mut c_void, name: &'static CStr) -> Result<*mut c_void, &'static str> {
    let f = dlsym(lib, name.as_ptr());
    if f.is_null() {
        Err(name.to_str().unwrap_or("?"))
    } else {
        Ok(f)
    }
}

fn last_dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl call.
    let e = unsafe { dlerror() };
    if e.is_null() {
        "dlopen failed".to_string()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

#[cfg(unix)]
fn path_bytes(path: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_bytes().to_vec()
}
