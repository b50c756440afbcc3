package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class VersionTest {
  @Test
  void abiVersionMatchesTheGeneratedOne() {
    assertEquals(Cairn.ABI_VERSION, Cairn.abiVersion());
    assertTrue(Cairn.ABI_VERSION >= 1);
  }

  @Test
  void versionIsSemantic() {
    assertTrue(Cairn.version().matches("\\d+\\.\\d+\\.\\d+.*"), Cairn.version());
  }

  @Test
  void aMismatchedAbiIsRefusedWithAClearMessage() {
    NativeLibrary.checkAbi(3, 3, "libcairn_jni.so");
    CairnException e = assertThrows(CairnException.class, () -> NativeLibrary.checkAbi(1, 2, "/x/libcairn_jni.so"));
    assertEquals(Code.FAILED_PRECONDITION, e.code());
    assertTrue(e.getMessage().startsWith("FAILED_PRECONDITION: Cairn ABI mismatch"), e.getMessage());
    assertTrue(e.getMessage().contains("CAIRN_ABI_VERSION 1"), e.getMessage());
    assertTrue(e.getMessage().contains("cairn_abi_version() = 2"), e.getMessage());
    assertTrue(e.getMessage().contains("/x/libcairn_jni.so"), e.getMessage());
  }

  @Test
  void theLibraryCameFromTheJarOrThePathProperty() {
    String dir = System.getProperty(NativeLibrary.LIBRARY_PATH_PROPERTY);
    String from = NativeLibrary.loadedFrom();
    if (dir != null) {
      assertTrue(from.endsWith("/libcairn_jni.so") && from.startsWith(new File(dir).getAbsolutePath()), from);
    } else {
      // Extracted from target/classes (the jar's layout) into a directory deleted right after loading.
      assertTrue(from.startsWith("jar:/dev/cairn/native/linux-x86_64/libcairn_jni.so (extracted to "), from);
      String tmp = from.substring(from.indexOf("extracted to ") + 13, from.length() - 1);
      assertFalse(new File(tmp).exists(), tmp + " is left behind");
    }
  }

  @Test
  void theNativeBridgeIsNotPartOfTheApi() throws Exception {
    assertFalse(java.lang.reflect.Modifier.isPublic(CairnNative.class.getModifiers()));
    assertFalse(java.lang.reflect.Modifier.isPublic(Callbacks.class.getModifiers()));
    assertFalse(java.lang.reflect.Modifier.isPublic(NativeLibrary.class.getModifiers()));
    java.lang.Module m = Cairn.class.getModule();
    if (m.isNamed()) {
      assertEquals("dev.cairn", m.getName());
      assertEquals(java.util.Set.of("dev.cairn"), m.getDescriptor().exports().stream()
          .map(ModuleDescriptor.Exports::source).collect(java.util.stream.Collectors.toSet()));
    }
  }

  private static SourceLauncher.Result runWithProperty(String dir, Path work) throws Exception {
    return runWithProperty(NativeLibrary.LIBRARY_PATH_PROPERTY, dir, work);
  }

  private static SourceLauncher.Result runWithProperty(String property, String value, Path work) throws Exception {
    // A tiny program on the classpath of target/classes that touches the library once.
    Path src = work.resolve("Touch.java");
    Files.writeString(src, "public class Touch { public static void main(String[] a) {"
        + " try { System.out.println(dev.cairn.Cairn.version()); }"
        + " catch (dev.cairn.CairnException e) { System.out.println(e.getMessage()); }"
        + " try { new dev.cairn.CairnContext(); }"
        + " catch (dev.cairn.CairnException e) { System.out.println(\"again: \" + e.getMessage()); } } }");
    String java = ProcessHandle.current().info().command().orElse("java");
    return SourceLauncher.exec(List.of(java, "-cp", new File(SourceLauncher.base(), "target/classes").getPath(),
        "-D" + property + "=" + value, src.toString()));
  }

  @Test
  void aMissingLibraryIsAClearExceptionAtEveryUse() throws Exception {
    Path work = Files.createTempDirectory("cairn-loader-test");
    try {
      SourceLauncher.Result r = runWithProperty(work.toString(), work);
      assertEquals(0, r.exitCode(), r.output());
      String expected = "UNAVAILABLE: Cairn native library not found: -Dcairn.library.path=" + work
          + " names a directory without libcairn_jni.so";
      assertTrue(r.output().startsWith(expected), r.output());
      assertTrue(r.output().contains("again: " + expected), r.output());
      assertFalse(r.output().contains("UnsatisfiedLinkError") || r.output().contains("NoClassDefFoundError"), r.output());

      // A JNI library without libcairn.so.1 beside it is refused before loading.
      Files.copy(new File(SourceLauncher.base(), "target/classes/dev/cairn/native/linux-x86_64/libcairn_jni.so").toPath(),
          work.resolve("libcairn_jni.so"));
      r = runWithProperty(work.toString(), work);
      assertTrue(r.output().startsWith("UNAVAILABLE: Cairn native library not found: -Dcairn.library.path=" + work
          + " names a directory without libcairn.so.1"), r.output());

      // A file that is no library: the dynamic linker's reason, and what was tried.
      Files.writeString(work.resolve("libcairn.so.1"), "not an ELF file");
      r = runWithProperty(work.toString(), work);
      assertTrue(r.output().startsWith("UNAVAILABLE: Cairn native library could not be loaded (-Dcairn.library.path="
          + work + "): "), r.output());
      assertTrue(r.output().contains("libcairn.so.1"), r.output());
    } finally {
      deleteTree(work);
    }
  }

  @Test
  void theLibraryLoadsFromADirectoryHoldingBothFiles() throws Exception {
    Path work = Files.createTempDirectory("cairn-loader-test");
    try {
      File natives = new File(SourceLauncher.base(), "target/classes/dev/cairn/native/linux-x86_64");
      for (String f : new String[] {"libcairn_jni.so", "libcairn.so.1"}) {
        Files.copy(new File(natives, f).toPath(), work.resolve(f));
      }
      SourceLauncher.Result r = runWithProperty(work.toString(), work);
      assertEquals(Cairn.version(), r.output().strip(), r.output());
      // The property of earlier versions names the JNI library file; libcairn.so.1 is beside it.
      r = runWithProperty(NativeLibrary.LEGACY_PATH_PROPERTY, work.resolve("libcairn_jni.so").toString(), work);
      assertEquals(Cairn.version(), r.output().strip(), r.output());
    } finally {
      deleteTree(work);
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void dtypesKnowTheirSizesAndNames() {
    assertEquals(4, DType.FLOAT32.byteSize());
    assertEquals(2, DType.BFLOAT16.byteSize());
    assertEquals(8, DType.COMPLEX64.byteSize());
    assertEquals(1, DType.BOOL.byteSize());
    assertEquals("float16", DType.FLOAT16.cName());
    assertEquals(DType.INT64, DType.fromValue(9));
    assertNull(DType.fromValue(12345));
  }
}
