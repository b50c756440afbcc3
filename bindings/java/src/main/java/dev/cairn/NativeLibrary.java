package dev.cairn;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the JNI library (which links libcairn) once, and refuses a library whose ABI differs from
 * the one this jar was generated for.
 *
 * <p>Where from: the directory named by the system property {@code cairn.library.path}, which must
 * hold both {@code libcairn_jni.so} and {@code libcairn.so.1}; otherwise both files are extracted
 * from this jar (resources under {@code /dev/cairn/native/<os>-<arch>/}) into a new private
 * temporary directory (unique per process, so JVMs running at once never share one), loaded, and
 * deleted again at once: a loaded library stays mapped after its file is gone. The JNI library
 * finds libcairn.so.1 beside itself (its runpath is {@code $ORIGIN}), so no library search path
 * is involved.
 *
 * <p>Loading never throws from a class initializer (which would leave a class that can never be
 * initialized and a cryptic {@code NoClassDefFoundError} on every later use). A failure is
 * recorded, and {@link #check()}, called by every entry point that does not already hold a handle,
 * throws it as a {@link CairnException} naming what was tried.
 */
final class NativeLibrary {
  /** The system property naming a directory holding libcairn_jni.so and libcairn.so.1. */
  static final String LIBRARY_PATH_PROPERTY = "cairn.library.path";
  /** Before 1.0: the JNI library file (or its directory); read as its directory when the above is unset. */
  static final String LEGACY_PATH_PROPERTY = "cairn.jni.path";
  static final String JNI_FILE = "libcairn_jni.so";
  static final String CORE_FILE = "libcairn.so.1";

  private static volatile String loadedFrom;
  private static volatile CairnException failure;

  private NativeLibrary() {}

  /** The platform directory name inside the jar, e.g. "linux-x86_64"; null for an unknown one. */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    else if (arch.equals("aarch64") || arch.equals("arm64")) arch = "aarch64";
    if (os.startsWith("linux")) return "linux-" + arch;
    if (os.startsWith("mac")) return "macos-" + arch;
    if (os.startsWith("windows")) return "windows-" + arch;
    return os.replace(' ', '_') + "-" + arch;
  }

  static String resourceDir() {
    return "/dev/cairn/native/" + platform() + "/";
  }

  // Runs once, from CairnNative's static initializer (the JVM serializes class initialization).
  static void load() {
    try {
      String dir = System.getProperty(LIBRARY_PATH_PROPERTY);
      String property = LIBRARY_PATH_PROPERTY;
      String legacy = System.getProperty(LEGACY_PATH_PROPERTY);
      if ((dir == null || dir.isEmpty()) && legacy != null && !legacy.isEmpty()) {
        Path p = Paths.get(legacy);
        dir = Files.isDirectory(p) || p.getParent() == null ? legacy : p.getParent().toString();
        property = LEGACY_PATH_PROPERTY;
      }
      String from = dir != null && !dir.isEmpty() ? loadFromDirectory(dir, property) : loadFromJar();
      checkAbi(CairnNative.ABI_VERSION, abiVersionOf(from), from);
      loadedFrom = from;
    } catch (CairnException e) {
      failure = e;
    }
  }

  private static int abiVersionOf(String from) {
    try {
      return CairnNative.abiVersion();
    } catch (UnsatisfiedLinkError e) {
      // The library loaded but does not bind this class's natives: a JNI library of another jar.
      throw new CairnException(
          Code.FAILED_PRECONDITION,
          "Cairn native library " + from + " does not match this jar (" + e.getMessage()
              + "); use the libcairn_jni.so built with this jar",
          e);
    }
  }

  private static String loadFromDirectory(String dir, String property) {
    Path base = Paths.get(dir).toAbsolutePath();
    Path jni = base.resolve(JNI_FILE);
    Path core = base.resolve(CORE_FILE);
    String tried = "-D" + property + "=" + dir;
    for (Path p : new Path[] {jni, core}) {
      if (!Files.isRegularFile(p)) {
        throw new CairnException(
            Code.UNAVAILABLE,
            "Cairn native library not found: " + tried + " names a directory without " + p.getFileName()
                + " (looked for " + p + "; the directory must hold " + JNI_FILE + " and " + CORE_FILE + ")");
      }
    }
    systemLoad(jni, tried);
    return jni.toString();
  }

  private static String loadFromJar() {
    String resources = resourceDir();
    String tried = "no -D" + LIBRARY_PATH_PROPERTY + " given, so from the jar's " + resources;
    if (NativeLibrary.class.getResource(resources + JNI_FILE) == null
        || NativeLibrary.class.getResource(resources + CORE_FILE) == null) {
      throw new CairnException(
          Code.UNAVAILABLE,
          "Cairn native library not found: " + tried + ", which holds no " + JNI_FILE + " and " + CORE_FILE
              + " (this jar carries linux-x86_64 only, or was built without them); build Cairn for this"
              + " platform and set -D" + LIBRARY_PATH_PROPERTY + "=DIR to the directory holding both files");
    }
    Path dir;
    try {
      dir = Files.createTempDirectory("cairn-native-"); // owner-only permissions, a fresh name
    } catch (IOException e) {
      throw new CairnException(
          Code.UNAVAILABLE,
          "Cairn native library: " + tried + ", but no temporary directory could be made in "
              + System.getProperty("java.io.tmpdir") + ": " + e,
          e);
    }
    Path jni = dir.resolve(JNI_FILE);
    Path core = dir.resolve(CORE_FILE);
    try {
      extract(resources + CORE_FILE, core);
      extract(resources + JNI_FILE, jni);
      systemLoad(jni, tried + ", extracted to " + dir);
      return "jar:" + resources + JNI_FILE + " (extracted to " + dir + ")";
    } catch (IOException e) {
      throw new CairnException(
          Code.UNAVAILABLE, "Cairn native library: " + tried + ", but extracting to " + dir + " failed: " + e, e);
    } finally {
      // Mapped libraries stay loaded without their files; nothing is left behind, even after a crash.
      deleteQuietly(jni);
      deleteQuietly(core);
      deleteQuietly(dir);
    }
  }

  private static void extract(String resource, Path to) throws IOException {
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) throw new IOException("resource " + resource + " vanished");
      Files.copy(in, to, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static void systemLoad(Path jni, String tried) {
    try {
      System.load(jni.toString());
    } catch (UnsatisfiedLinkError e) {
      throw new CairnException(
          Code.UNAVAILABLE,
          "Cairn native library could not be loaded (" + tried + "): " + e.getMessage()
              + " (a temporary directory on a noexec mount cannot load libraries: set -Djava.io.tmpdir"
              + " or -D" + LIBRARY_PATH_PROPERTY + ")",
          e);
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      p.toFile().deleteOnExit();
    }
  }

  /**
   * Makes sure the native library is loaded, or throws why it is not (the same exception on
   * every call). Entry points that create the first handle call it.
   */
  static void check() {
    CairnNative.touch();
    CairnException f = failure;
    if (f != null) {
      CairnException copy = new CairnException(f.code(), f.detail(), f.getCause());
      throw copy;
    }
  }

  /** Where the JNI library was loaded from: a path, or the jar resource and where it went. */
  static String loadedFrom() {
    check();
    return loadedFrom;
  }

  /** Throws when the native library's ABI version differs from the one the binding was generated for. */
  static void checkAbi(int expected, int actual, String library) {
    if (expected != actual) {
      throw new CairnException(
          Code.FAILED_PRECONDITION,
          "Cairn ABI mismatch: this Java binding was generated for CAIRN_ABI_VERSION "
              + expected
              + " but the libcairn.so.1 loaded with ("
              + library
              + ") reports cairn_abi_version() = "
              + actual
              + ". Use libcairn.so.1 and libcairn_jni.so built from the same Cairn version as"
              + " this jar, or regenerate the binding.");
    }
  }
}
