package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Optimizer: kinds, updates, iterations, learning rates, schedules, slots, errors. */
class OptimizerTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private Variable var(float value, String name) {
    try (Tensor t = Tensor.scalar(ctx, value)) {
      return Variable.create(ctx, t, Variable.options().name(name));
    }
  }

  private static float value(Variable v) {
    try (Tensor t = v.read()) {
      return t.toFloatArray()[0];
    }
  }

  private void step(Optimizer opt, Variable v, float gradient) {
    try (Tensor g = Tensor.scalar(ctx, gradient)) {
      opt.applyGradients(new Tensor[] {g}, new Variable[] {v});
    }
  }

  @Test
  void sgdWithMomentum() {
    try (Variable v = var(5, "v");
        Optimizer opt = Optimizer.create(ctx, Optimizer.options().learningRate(0.1).momentum(0.9))) {
      assertEquals(ObjectKind.OPTIMIZER, opt.kind());
      assertEquals(0, opt.iterations());
      CairnException e = assertThrows(CairnException.class, () -> opt.slot(v, "momentum"));
      assertEquals(Code.NOT_FOUND, e.code());
      step(opt, v, 10); // m = -lr g = -1; v += m
      assertEquals(4, value(v), 1e-6);
      step(opt, v, 10); // m = 0.9 * -1 - 1 = -1.9
      assertEquals(2.1, value(v), 1e-6);
      assertEquals(2, opt.iterations());
      assertEquals(0.1, opt.learningRate(), 1e-7);
      try (Variable slot = opt.slot(v, "momentum")) {
        assertEquals(-1.9, value(slot), 1e-6);
        assertFalse(slot.trainable());
      }
      assertTrue(opt.toString().contains("iterations=2"), opt.toString());
    }
  }

  @Test
  void plainSgdAndSetLearningRate() {
    try (Variable v = var(1, "v");
        Optimizer opt = Optimizer.sgd(ctx, 0.5)) {
      step(opt, v, 1);
      assertEquals(0.5, value(v), 1e-6);
      opt.setLearningRate(0.25);
      assertEquals(0.25, opt.learningRate(), 1e-7);
      step(opt, v, 1);
      assertEquals(0.25, value(v), 1e-6);
      CairnException e = assertThrows(CairnException.class, () -> opt.setLearningRate(-1));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  void adamFirstStepMovesByTheLearningRate() {
    // Adam's first step is lr * g / (|g| + eps) in each coordinate: -lr * sign(g).
    for (OptimizerKind kind : List.of(OptimizerKind.ADAM, OptimizerKind.ADAMW, OptimizerKind.RMSPROP)) {
      try (Variable v = var(1, "v");
          Optimizer opt = Optimizer.create(ctx, Optimizer.options().kind(kind).learningRate(0.01).weightDecay(0))) {
        step(opt, v, 3);
        float moved = 1 - value(v);
        assertTrue(moved > 0 && moved < 0.1, kind + " moved " + moved);
        if (kind != OptimizerKind.RMSPROP) {
          assertEquals(0.01, moved, 1e-4, kind.toString());
          try (Variable m = opt.slot(v, "m");
              Variable s = opt.slot(v, "v")) {
            assertEquals(0.3, value(m), 1e-6); // (1 - beta1) g
            assertEquals(0.009, value(s), 1e-6); // (1 - beta2) g^2
          }
        } else {
          try (Variable rms = opt.slot(v, "rms")) {
            assertEquals(0.9, value(rms), 1e-5); // (1 - rho) g^2
          }
        }
      }
    }
    try (Optimizer adam = Optimizer.adam(ctx, 0.005)) {
      assertEquals(0.005, adam.learningRate(), 1e-7);
    }
  }

  @Test
  void unsetOptionsKeepTheHeadersDefaults() {
    // Options send only what was set; the rest comes from cairn_optimizer_options_init (0.01).
    try (Optimizer adam = Optimizer.create(ctx, Optimizer.options().kind(OptimizerKind.ADAM));
        Optimizer set = Optimizer.create(ctx, Optimizer.options().learningRate(0.5));
        Optimizer none = Optimizer.create(ctx, null)) {
      assertEquals(0.01, adam.learningRate(), 1e-7); // stored as float32
      assertEquals(0.5, set.learningRate(), 1e-7);
      assertEquals(0.01, none.learningRate(), 1e-7);
    }
  }

  @Test
  void nullGradientSkipsItsVariable() {
    try (Variable a = var(1, "a");
        Variable b = var(1, "b");
        Tensor g = Tensor.scalar(ctx, 1f);
        Optimizer opt = Optimizer.sgd(ctx, 0.5)) {
      opt.applyGradients(new Tensor[] {g, null}, List.of(a, b));
      assertEquals(0.5, value(a), 1e-6);
      assertEquals(1, value(b), 1e-6);
      assertEquals(1, opt.iterations());
    }
  }

  @Test
  void schedules() {
    try (LearningRateSchedule exp = LearningRateSchedule.exponentialDecay(ctx, 0.1, 1, 0.5, false);
        LearningRateSchedule cos = LearningRateSchedule.cosineDecay(ctx, 1.0, 2, 0.0);
        Optimizer a = Optimizer.create(ctx, Optimizer.options().schedule(exp));
        Optimizer b = Optimizer.create(ctx, Optimizer.options().schedule(cos));
        Variable v = var(0, "v")) {
      assertEquals(ObjectKind.TRACKABLE, exp.kind());
      assertEquals(0.1, a.learningRate(), 1e-7);
      step(a, v, 1);
      assertEquals(0.05, a.learningRate(), 1e-7); // 0.1 * 0.5^1
      step(a, v, 1);
      assertEquals(0.025, a.learningRate(), 1e-7);
      assertEquals(1.0, b.learningRate(), 1e-7);
      step(b, v, 1);
      assertEquals(0.5, b.learningRate(), 1e-7); // 0.5 (1 + cos(pi / 2))
      step(b, v, 1);
      assertEquals(0.0, b.learningRate(), 1e-7);
      CairnException e = assertThrows(CairnException.class, () -> a.setLearningRate(0.1));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
    }
  }

  @Test
  void errors() {
    CairnException e =
        assertThrows(CairnException.class, () -> Optimizer.create(ctx, Optimizer.options().learningRate(-1)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("learning_rate"), e.getMessage());
    e = assertThrows(CairnException.class,
        () -> Optimizer.create(ctx, Optimizer.options().kind(OptimizerKind.ADAM).beta1(1.5)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    e = assertThrows(CairnException.class, () -> LearningRateSchedule.exponentialDecay(ctx, 0.1, 0, 0.5, false));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    try (Variable v = var(1, "v");
        Tensor wrongShape = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor frozenInit = Tensor.scalar(ctx, 1f);
        Variable frozen = Variable.create(ctx, frozenInit, Variable.options().name("frozen").trainable(false));
        Optimizer opt = Optimizer.sgd(ctx, 0.1)) {
      e = assertThrows(CairnException.class,
          () -> opt.applyGradients(new Tensor[] {wrongShape}, new Variable[] {v}));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("v"), e.getMessage());
      try (Tensor g = Tensor.scalar(ctx, 1f)) {
        e = assertThrows(CairnException.class,
            () -> opt.applyGradients(new Tensor[] {g}, new Variable[] {frozen}));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertThrows(IllegalArgumentException.class,
            () -> opt.applyGradients(new Tensor[] {g, g}, new Variable[] {v}));
      }
      assertEquals(0, opt.iterations()); // nothing was applied
      assertEquals(1, value(v), 1e-6);
    }
  }

  @Test
  void optimizersComeBackFromTheObjectGraph() {
    try (Trackable root = Trackable.create(ctx);
        Optimizer opt = Optimizer.sgd(ctx, 0.1)) {
      root.set("opt", opt);
      try (Optimizer got = root.get("opt", Optimizer.class)) {
        assertTrue(got.sameObject(opt));
        assertEquals(0.1, got.learningRate(), 1e-7);
      }
    }
  }
}
