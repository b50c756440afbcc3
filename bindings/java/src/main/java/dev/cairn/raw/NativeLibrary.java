package dev.cairn.raw;

import java.io.File;

/**
 * Loads libcairn_jni (which links libcairn) once, and refuses a library whose ABI differs from
 * the one this jar was generated for.
 *
 * <p>Where from: the system property {@code cairn.jni.path} (or {@code cairn.library.path}),
 * naming the library file or the directory holding it; otherwise {@code
 * System.loadLibrary("cairn_jni")}, which searches {@code java.library.path}. libcairn.so itself
 * is found by the dynamic linker (the JNI library's runpath, or {@code LD_LIBRARY_PATH}).
 */
public final class NativeLibrary {
  /** The system property naming the JNI library file or its directory. */
  public static final String PATH_PROPERTY = "cairn.jni.path";
  /** An alternative name for {@link #PATH_PROPERTY}. */
  public static final String LIBRARY_PATH_PROPERTY = "cairn.library.path";

  private static volatile String loadedFrom;

  private NativeLibrary() {}

  // Runs once, from CairnNative's static initializer (the JVM serializes class initialization).
  static void load() {
    String path = System.getProperty(PATH_PROPERTY);
    if (path == null || path.isEmpty()) path = System.getProperty(LIBRARY_PATH_PROPERTY);
    String from;
    if (path != null && !path.isEmpty()) {
      File file = new File(path);
      if (file.isDirectory()) file = new File(file, System.mapLibraryName("cairn_jni"));
      from = file.getAbsolutePath();
      System.load(from);
    } else {
      from = System.mapLibraryName("cairn_jni") + " on java.library.path";
      System.loadLibrary("cairn_jni");
    }
    checkAbi(CairnNative.ABI_VERSION, CairnNative.abiVersion(), from);
    loadedFrom = from;
  }

  /** Where the JNI library was loaded from (a path, or a note that it came from the library path). */
  public static String loadedFrom() {
    CairnNative.abiVersion(); // loads the library if nothing has yet
    return loadedFrom;
  }

  /**
   * Throws {@link UnsatisfiedLinkError} when the native library's ABI version differs from the
   * one the binding was generated for.
   */
  public static void checkAbi(int expected, int actual, String library) {
    if (expected != actual) {
      throw new UnsatisfiedLinkError(
          "Cairn ABI mismatch: this Java binding was generated for CAIRN_ABI_VERSION "
              + expected
              + " but the native library ("
              + library
              + ") reports cairn_abi_version() = "
              + actual
              + ". Use libcairn.so and libcairn_jni.so built from the same Cairn version as"
              + " this jar, or regenerate the binding.");
    }
  }
}
