package dev.cairn;

import java.nio.charset.StandardCharsets;

/**
 * The hand-written fast path of the op wrappers (src/main/native/cairn_jni_ops.c): an op with one
 * output, one to three inputs and no attributes runs in one JNI call on the handles, returning
 * the output's handle. Package-private.
 */
final class OpNative {
  private OpNative() {}

  /**
   * The op name as a NUL-terminated C string kept for the life of the process (for a constant);
   * 0 when the native library did not load.
   */
  static long name(String op) {
    CairnNative.touch(); // loads the library (a failure waits in NativeLibrary.check())
    try {
      return name(op.getBytes(StandardCharsets.UTF_8));
    } catch (UnsatisfiedLinkError e) {
      return 0; // no library: no context can be made, so the constant is never used
    }
  }

  private static native long name(byte[] op);

  /** cairn_op_run with {@code n} (1 to 3) inputs, no attributes and one output: the output's handle. */
  static native long run(long ctx, long op, int n, long a, long b, long c);

  /**
   * Runs the op {@code iterations} times from C (cairn_op_run, cairn_tensor_free) and returns
   * the nanoseconds it took: what the Java benchmark compares with.
   */
  static native long benchLoop(long ctx, long op, int n, long a, long b, long c, int iterations);
}
