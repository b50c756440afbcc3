package dev.cairn;

import java.lang.ref.Reference;

/**
 * A module (tf.Module): a trackable with a name and a name scope. Variables created with a module
 * as their scope ({@link Variable.Options#scope}) are named "&lt;scope&gt;/&lt;name&gt;:0".
 */
public final class Module extends CairnObject {
  Module(long handle) {
    super(handle);
  }

  /**
   * A module named {@code name} (null: "module"); INVALID_ARGUMENT for an empty name or one holding '/' or ':'.
   *
   * @param ctx the context
   * @param name the name
   * @return a module named {@code name} (null: "module"); INVALID_ARGUMENT for an empty name or one holding '/' or ':'
   */
  public static Module create(CairnContext ctx, String name) {
    return create(ctx, name, null);
  }

  /**
   * A module inside the name scope of {@code parentScope} (null: none): module "m2" created in the
   * scope of "m1" has scope "m1/m2". The two are not linked by an edge.
   *
   * @param ctx the context
   * @param name the name
   * @param parentScope the module whose scope prefixes this one's (null: none)
   * @return the new module, which the caller closes
   */
  public static Module create(CairnContext ctx, String name, Module parentScope) {
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      long h =
          parentScope == null
              ? CairnNative.moduleCreate(c, n)
              : CairnNative.moduleCreateInScope(c, n, parentScope.handle());
      return new Module(h);
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(parentScope);
    }
  }

  /**
   * The module's name, e.g. "m2".
   *
   * @return the module's name
   */
  public String name() {
    long h = handle();
    try {
      return CairnNative.moduleName(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The module's name scope, e.g. "m1/m2" (its name when created without a parent scope).
   *
   * @return the module's name scope
   */
  public String scope() {
    long h = handle();
    try {
      return CairnNative.moduleScope(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  String describe() {
    return scope();
  }
}
