package dev.cairn;

import java.nio.charset.StandardCharsets;

/** What the handle classes share: C string encoding (the backstop of close() is {@link Backstop}). */
final class NativeResources {
  private NativeResources() {}

  /** UTF-8 bytes for a C string parameter; null stays null. */
  static byte[] cstr(String s) {
    if (s == null) return null;
    if (s.indexOf('\0') >= 0) throw new IllegalArgumentException("a C string cannot hold NUL: " + s);
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
