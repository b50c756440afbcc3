package dev.cairn;

import java.util.Objects;

/**
 * An object found by a query ({@link CairnObject#children}, {@link CairnObject#flatten}, {@link
 * CairnObject#walk}) and its path: edge names joined by '/', e.g. "sub/v" ("" for a walk's
 * root). The object is a handle the caller owns; {@link #close()} closes it.
 */
public record ObjectPath(String path, CairnObject object) implements AutoCloseable {
  /**
   * A path and its object.
   *
   * @param path the edge names joined by '/'
   * @param object the object, owned by this record
   */
  public ObjectPath {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(object, "object");
  }

  @Override
  public void close() {
    object.close();
  }
}
