package org.graphene.tez;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import org.apache.tez.dag.app.dag.DAG;
import org.apache.tez.dag.app.dag.Vertex;

/**
 * {@code graphene-tez-signature/1}: the name of a DAG's shape that survives renames and other
 * parallelisms, so that a recurring DAG finds its order in a directory of exports.
 *
 * <p>The lowercase hex SHA-256 of the UTF-8 text made of, for each vertex name sorted by byte
 * order, {@code "v\t" + name + "\n"}, then for each edge (source, destination) sorted by
 * (source, destination) byte order, {@code "e\t" + source + "\t" + destination + "\n"}. DAG
 * names, data movement types, parallelism and resources are left out. A name holding a tab or a
 * newline has no signature. {@code graphene export --format tez --from-history} computes the same
 * value from Tez's history.
 */
public final class GrapheneSignature {
  public static final String VERSION = "graphene-tez-signature/1";

  private GrapheneSignature() {}

  /** Thrown for a DAG whose vertex names cannot be written into the signature's text. */
  public static final class NoSignatureException extends Exception {
    private static final long serialVersionUID = 1L;

    NoSignatureException(String why) {
      super(why);
    }
  }

  /** UTF-8 byte order (Java's String order differs for characters beyond U+FFFF). */
  static final Comparator<String> BYTE_ORDER =
      new Comparator<String>() {
        @Override
        public int compare(String a, String b) {
          byte[] x = a.getBytes(StandardCharsets.UTF_8);
          byte[] y = b.getBytes(StandardCharsets.UTF_8);
          int n = Math.min(x.length, y.length);
          for (int i = 0; i < n; i++) {
            int c = (x[i] & 0xff) - (y[i] & 0xff);
            if (c != 0) {
              return c;
            }
          }
          return x.length - y.length;
        }
      };

  /** The signature of the DAG the AM runs: its vertices and, per vertex, its output vertices. */
  public static String of(DAG dag) throws NoSignatureException {
    List<String> vertices = new ArrayList<>();
    List<String[]> edges = new ArrayList<>();
    Map<?, Vertex> all = dag.getVertices();
    if (all != null) {
      for (Vertex v : all.values()) {
        vertices.add(v.getName());
        Map<Vertex, ?> outs = v.getOutputVertices();
        if (outs != null) {
          for (Vertex d : outs.keySet()) {
            edges.add(new String[] {v.getName(), d.getName()});
          }
        }
      }
    }
    return of(vertices, edges);
  }

  /** The signature of vertex names and edges given as {source, destination} pairs. */
  public static String of(Collection<String> vertexNames, Collection<String[]> edgeList)
      throws NoSignatureException {
    List<String> vertices = new ArrayList<>(vertexNames);
    List<String[]> edges = new ArrayList<>(edgeList);
    for (String v : vertices) {
      check(v);
    }
    for (String[] e : edges) {
      check(e[0]);
      check(e[1]);
    }
    vertices.sort(BYTE_ORDER);
    edges.sort(
        new Comparator<String[]>() {
          @Override
          public int compare(String[] a, String[] b) {
            int c = BYTE_ORDER.compare(a[0], b[0]);
            return c != 0 ? c : BYTE_ORDER.compare(a[1], b[1]);
          }
        });
    StringBuilder text = new StringBuilder();
    for (String v : vertices) {
      text.append("v\t").append(v).append('\n');
    }
    for (String[] e : edges) {
      text.append("e\t").append(e[0]).append('\t').append(e[1]).append('\n');
    }
    return sha256(text.toString());
  }

  private static void check(String name) throws NoSignatureException {
    if (name.indexOf('\t') >= 0 || name.indexOf('\n') >= 0) {
      throw new NoSignatureException(
          "vertex name '" + name.replace("\t", "\\t").replace("\n", "\\n")
              + "' holds a tab or a newline: the DAG has no " + VERSION);
    }
  }

  static String sha256(String text) {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
    byte[] d = md.digest(text.getBytes(StandardCharsets.UTF_8));
    StringBuilder hex = new StringBuilder(64);
    for (byte b : d) {
      hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return hex.toString();
  }
}
