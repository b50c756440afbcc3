package dev.cairn;

import java.lang.ref.Reference;

/**
 * An open scope of a {@link MirroredStrategy} (strategy.scope()): while it is open, variables made
 * on this thread (directly, by layers, by optimizers) are mirrored on every replica device, and a
 * model created and compiled meanwhile trains on every replica.
 *
 * <pre>{@code
 * try (StrategyScope s = strategy.scope()) {
 *   model = Model.create(ctx, "net", hidden, logits).compile(sgd, "sparse_categorical_crossentropy");
 * }
 * }</pre>
 *
 * <p>A scope belongs to the thread that opened it (a platform thread); {@link #close()} on another
 * thread throws FAILED_PRECONDITION and closes nothing. Scopes nest; close them in reverse order.
 */
public final class StrategyScope extends ThreadScope {
  private final MirroredStrategy strategy;

  StrategyScope(MirroredStrategy strategy) {
    this.strategy = strategy;
    try {
      CairnNative.strategyScopeEnter(strategy.handle());
    } finally {
      Reference.reachabilityFence(strategy);
    }
  }

  @Override
  void exit() {
    try {
      CairnNative.strategyScopeExit(strategy.handle());
    } finally {
      Reference.reachabilityFence(strategy);
    }
  }
}
