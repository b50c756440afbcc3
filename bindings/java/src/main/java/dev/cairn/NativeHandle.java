package dev.cairn;

import java.lang.ref.Reference;
import java.lang.reflect.Modifier;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * What every class owning one native handle shares: the handle, the closed flag, and a {@link
 * Backstop} registration that frees the handle when its owner is collected without {@link
 * #close()}. Callers fence the owner ({@code Reference.reachabilityFence(this)}) after a native
 * call that uses {@link #handle()}, so that the backstop cannot free it mid-call.
 */
abstract class NativeHandle implements AutoCloseable {
  // Owned handles not yet freed (by close() or by the backstop) nor taken; tests wait on it.
  private static final AtomicLong LIVE = new AtomicLong();

  private final long handle;
  private final Backstop.Ref ref; // null for a handle owned elsewhere
  private volatile boolean closed;

  /**
   * Takes ownership of {@code handle}, which {@code free} releases (null: borrowed, never freed
   * here and {@link #close()} is up to the subclass).
   */
  NativeHandle(long handle, LongConsumer free) {
    this(handle, free, 0);
  }

  /**
   * As above, for a handle holding {@code nativeBytes} bytes of data, counted in {@link
   * NativeMemory#liveBytes()} until it is freed (which may trigger a collection now).
   */
  NativeHandle(long handle, LongConsumer free, long nativeBytes) {
    this.handle = handle;
    if (free != null) LIVE.incrementAndGet();
    this.ref = free == null ? null : Backstop.register(this, handle, free, nativeBytes);
    if (ref != null && nativeBytes != 0) NativeMemory.allocated(nativeBytes);
  }

  /** How many owned handles are not freed yet (for leak tests). */
  static long liveHandles() {
    return LIVE.get();
  }

  /** The owned handle of {@code r} was freed or handed on (by close(), take() or the backstop). */
  static void released(Backstop.Ref r) {
    LIVE.decrementAndGet();
    if (r.nativeBytes() != 0) NativeMemory.freed(r.nativeBytes());
  }

  /** The handle; throws (see {@link #checkClosed()}) once closed. */
  final long handle() {
    checkClosed();
    return handle;
  }

  /**
   * Throws CairnException FAILED_PRECONDITION "&lt;Class.method&gt;: &lt;what&gt; is closed" (e.g.
   * "Tensor.toFloatArray: tensor is closed") when this was closed.
   */
  void checkClosed() {
    if (closed) throw closedError(getClass(), "");
  }

  /**
   * The exception for using a closed {@code type}: the method named is the outermost public
   * method of this package's public classes in the run of binding frames that ends at the
   * caller's code (the method the caller called), the thing is {@code type}'s name in words
   * ("tensor", "gradient tape"), and {@code extra} follows.
   */
  static CairnException closedError(Class<?> type, String extra) {
    String method = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> {
      StackWalker.StackFrame api = null;
      for (StackWalker.StackFrame f : (Iterable<StackWalker.StackFrame>) frames::iterator) {
        if (inBinding(f.getDeclaringClass())) {
          if (isPublicMethod(f)) api = f;
        } else if (api != null) {
          break; // the caller's code
        }
      }
      return api == null ? type.getSimpleName() : api.getDeclaringClass().getSimpleName() + "." + api.getMethodName();
    });
    return new CairnException(Code.FAILED_PRECONDITION, method + ": " + words(type) + " is closed" + extra);
  }

  // A class of this binding's API (or nested in one): in this package, its top-level class public.
  private static boolean inBinding(Class<?> c) {
    return c.getPackage() == NativeHandle.class.getPackage() && Modifier.isPublic(c.getNestHost().getModifiers());
  }

  private static boolean isPublicMethod(StackWalker.StackFrame f) {
    Class<?> c = f.getDeclaringClass();
    if (!Modifier.isPublic(c.getModifiers())) return false;
    try {
      return Modifier.isPublic(c.getDeclaredMethod(f.getMethodName(), f.getMethodType().parameterArray()).getModifiers());
    } catch (NoSuchMethodException e) {
      return false; // a constructor or a synthetic method
    }
  }

  // "CairnContext" -> "context", "GradientTape" -> "gradient tape".
  private static String words(Class<?> type) {
    String name = type.getSimpleName().replaceFirst("^Cairn(?=[A-Z])", "");
    return name.replaceAll("(?<=[a-z0-9])(?=[A-Z])", " ").toLowerCase(Locale.ROOT);
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return whether {@link #close()} was called
   */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Hands the owned handle to the caller (a C function that takes it) and closes this without
   * freeing it. Throws (see {@link #checkClosed()}) once closed.
   */
  final synchronized long take() {
    long h = handle();
    if (ref == null) throw new IllegalStateException(getClass().getSimpleName() + " does not own its handle");
    if (!ref.take()) throw closedError(getClass(), ""); // a close() on another thread won
    released(ref);
    close(); // frees nothing now: the subclass's own closing
    Reference.reachabilityFence(this);
    return h;
  }

  /** Frees the handle. Idempotent and thread-safe. */
  @Override
  public void close() {
    closed = true;
    if (ref != null && ref.release()) released(ref);
    Reference.reachabilityFence(this); // the backstop must not see this unreachable mid-close
  }
}
