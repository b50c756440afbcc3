package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Device scopes (CairnContext.deviceScope) and soft placement with its copy counter; the Vulkan case
 * runs on lavapipe where a driver exists.
 */
class PlacementTest {
  @Test
  @SuppressWarnings("try") // the scopes are there for their close()
  void scopesNestAndPlaceTensors() {
    try (CairnContext ctx = new CairnContext()) {
      try (DeviceScope outer = ctx.deviceScope("cpu");
          DeviceScope inner = ctx.deviceScope("cpu:0");
          Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2)) {
        assertEquals("cpu", x.device());
      }
      CairnException e = assertThrows(CairnException.class, () -> ctx.deviceScope("tpu:9"));
      assertEquals(Code.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("\"tpu:9\""), e.getMessage());
    }
  }

  @Test
  void closeOnAnotherThreadThrows() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      DeviceScope scope = ctx.deviceScope("cpu");
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread t = new Thread(() -> {
        try {
          scope.close();
        } catch (Throwable e) {
          thrown.set(e);
        }
      });
      t.start();
      t.join();
      assertTrue(thrown.get() instanceof CairnException, String.valueOf(thrown.get()));
      assertEquals(Code.FAILED_PRECONDITION, ((CairnException) thrown.get()).code());
      scope.close(); // the owning thread still can
      scope.close(); // and a second close does nothing
    }
  }

  @Test
  void softPlacementCountsCopies() {
    try (CairnContext ctx = new CairnContext();
        CairnContext other = new CairnContext(); // another context's CPU is another device
        Tensor a = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor b = Tensor.of(other, new float[] {10, 20}, 2)) {
      assertFalse(ctx.softPlacement());
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> Ops.add(ctx, a, b)).code());
      ctx.setSoftPlacement(true);
      assertTrue(ctx.softPlacement());
      try (Tensor sum = Ops.add(ctx, a, b)) {
        assertArrayEquals(new float[] {11, 22}, sum.toFloatArray());
      }
      assertEquals(1, ctx.autoCopies());
    }
  }

  @Test
  @SuppressWarnings("try") // the scope is there for its close()
  void vulkanScopePlacesVariablesAndOps() {
    if (!Vulkan.available()) return; // no Vulkan driver: nothing to check
    try (CairnContext ctx = new CairnContext(); Tensor host = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      ctx.setSoftPlacement(true);
      try (DeviceScope s = ctx.deviceScope("vulkan:0");
          Variable v = Variable.create(ctx, host);
          Tensor value = v.read();
          Tensor sum = Ops.add(ctx, host, host)) {
        assertEquals("vulkan:0", value.device());
        assertEquals("vulkan:0", sum.device());
        assertArrayEquals(new float[] {2, 4}, sum.toFloatArray());
      }
      assertEquals(2, ctx.autoCopies());
    }
  }
}
