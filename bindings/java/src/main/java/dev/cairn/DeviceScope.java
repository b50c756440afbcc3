package dev.cairn;

import java.lang.ref.Reference;

/**
 * An open device scope of a {@link CairnContext} (tf.device): while it is open, ops without inputs,
 * tensors made from Java values and variables created on this thread go to its device, and with
 * soft placement on ({@link CairnContext#setSoftPlacement}) ops with inputs run there too.
 *
 * <pre>{@code
 * try (DeviceScope s = ctx.deviceScope("vulkan:0")) {
 *   Variable w = Variable.create(ctx, initial);   // lives on vulkan:0
 * }
 * }</pre>
 *
 * <p>A scope belongs to the thread that opened it (a platform thread: a virtual thread may move
 * between carrier threads, so do not open scopes on one). {@link #close()} on another thread throws
 * FAILED_PRECONDITION and closes nothing. Scopes nest; close them in reverse order
 * (try-with-resources does). Do not close the context while a scope of it is open.
 */
public final class DeviceScope extends ThreadScope {
  private final CairnContext ctx;

  DeviceScope(CairnContext ctx, String device) {
    if (device == null) throw new NullPointerException("device");
    this.ctx = ctx;
    try {
      CairnNative.deviceScopeEnter(ctx.handle(), NativeResources.cstr(device));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  @Override
  void exit() {
    try {
      CairnNative.deviceScopeExit(ctx.handle());
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }
}
