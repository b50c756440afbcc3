package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import dev.cairn.raw.NativeLibrary;
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
    UnsatisfiedLinkError e =
        assertThrows(UnsatisfiedLinkError.class, () -> NativeLibrary.checkAbi(1, 2, "/x/libcairn_jni.so"));
    assertTrue(e.getMessage().contains("ABI mismatch"), e.getMessage());
    assertTrue(e.getMessage().contains("CAIRN_ABI_VERSION 1"), e.getMessage());
    assertTrue(e.getMessage().contains("cairn_abi_version() = 2"), e.getMessage());
    assertTrue(e.getMessage().contains("/x/libcairn_jni.so"), e.getMessage());
  }

  @Test
  void theLibraryCameFromThePathProperty() {
    String property = System.getProperty(NativeLibrary.PATH_PROPERTY);
    if (property != null) assertTrue(NativeLibrary.loadedFrom().contains("cairn_jni"), NativeLibrary.loadedFrom());
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
