package dev.cairn;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;

/** What the handle classes share: the Cleaner that backs up close(), and C string encoding. */
final class NativeResources {
  /** One daemon thread frees what was garbage collected without close(). */
  static final Cleaner CLEANER = Cleaner.create();

  private NativeResources() {}

  /** UTF-8 bytes for a C string parameter; null stays null. */
  static byte[] cstr(String s) {
    if (s == null) return null;
    if (s.indexOf('\0') >= 0) throw new IllegalArgumentException("a C string cannot hold NUL: " + s);
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
