package org.graphene.tez;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.tez.dag.api.records.DAGProtos.ConfigurationProto;
import org.apache.tez.dag.api.records.DAGProtos.DAGPlan;
import org.apache.tez.dag.api.records.DAGProtos.PlanKeyValuePair;
import org.apache.tez.dag.app.dag.DAG;
import org.apache.tez.dag.app.dag.Vertex;
import org.apache.tez.dag.app.dag.impl.Edge;
import org.apache.tez.dag.records.TezDAGID;
import org.apache.tez.dag.records.TezVertexID;
import org.junit.After;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * graphene-tez-signature/1 and how the scheduler finds a DAG's export: by signature, then by
 * name, from the DAG's configuration, -D or the environment; and the one line it logs.
 */
public class GrapheneLookupTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  /** The contract's test vector, also checked by the Rust exporter. */
  static final String HIVE_SIGNATURE =
      "101843599e02475317b784fba8058a85d1a0d208acb6f7262098ece585f2be7d";

  @After
  public void tearDown() {
    System.clearProperty(GrapheneDAGScheduler.PROPERTY);
  }

  /** A mocked DAG with these vertices and edges ({source, destination}) and DAG conf keys. */
  static DAG dag(String name, List<String> vertices, List<String[]> edges, String... conf) {
    TezDAGID dagId = TezDAGID.getInstance(ApplicationId.newInstance(1, 1), 1);
    DAG dag = mock(DAG.class);
    when(dag.getName()).thenReturn(name);
    when(dag.getTotalVertices()).thenReturn(vertices.size());
    Map<TezVertexID, Vertex> all = new LinkedHashMap<>();
    Map<String, Vertex> byName = new HashMap<>();
    Map<String, Map<Vertex, Edge>> outs = new HashMap<>();
    for (int i = 0; i < vertices.size(); i++) {
      TezVertexID vid = TezVertexID.getInstance(dagId, i);
      Vertex v = mock(Vertex.class);
      when(v.getName()).thenReturn(vertices.get(i));
      when(v.getVertexId()).thenReturn(vid);
      when(dag.getVertex(vid)).thenReturn(v);
      all.put(vid, v);
      byName.put(vertices.get(i), v);
      Map<Vertex, Edge> o = new HashMap<>();
      outs.put(vertices.get(i), o);
      when(v.getOutputVertices()).thenReturn(o);
    }
    for (String[] e : edges) {
      outs.get(e[0]).put(byName.get(e[1]), null);
    }
    when(dag.getVertices()).thenReturn(all);
    if (conf.length > 0) {
      ConfigurationProto.Builder c = ConfigurationProto.newBuilder();
      for (int i = 0; i + 1 < conf.length; i += 2) {
        c.addConfKeyValues(PlanKeyValuePair.newBuilder().setKey(conf[i]).setValue(conf[i + 1]));
      }
      when(dag.getJobPlan()).thenReturn(DAGPlan.newBuilder().setName(name).setDagConf(c).build());
    }
    return dag;
  }

  static List<String[]> edges(String... pairs) {
    List<String[]> l = new ArrayList<>();
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      l.add(new String[] {pairs[i], pairs[i + 1]});
    }
    return l;
  }

  static final List<String> HIVE = Arrays.asList("Reducer 3", "Map 2", "Map 1");
  static final List<String[]> HIVE_EDGES = edges("Map 2", "Reducer 3", "Map 1", "Reducer 3");

  /** A graphene-tez/2 export giving vertex i of `order` the range [3i+1, 3i+3]. */
  static String export(String dagName, String signature, String... order) {
    StringBuilder b = new StringBuilder("{\"format\": \"graphene-tez/2\", \"dag\": \"" + dagName + "\", ");
    if (signature != null) {
      b.append("\"signature\": \"").append(signature).append("\", ");
    }
    b.append("\"vertices\": [");
    for (int i = 0; i < order.length; i++) {
      b.append(i > 0 ? ", " : "").append("{\"name\": \"").append(order[i]).append("\", \"priority\": ")
          .append(i + 1).append(", \"low\": ").append(3 * i + 3).append(", \"high\": ")
          .append(3 * i + 1).append(", \"tasks\": 1}");
    }
    return b.append("], \"tasks\": []}").toString();
  }

  static void write(File f, String text) throws IOException {
    Files.write(f.toPath(), text.getBytes(StandardCharsets.UTF_8));
  }

  private static GrapheneDAGScheduler scheduler(DAG dag) {
    return new GrapheneDAGScheduler(dag, mock(EventHandler.class));
  }

  @Test
  public void theSignatureOfTheTestVector() throws Exception {
    // printf 'v\tMap 1\nv\tMap 2\nv\tReducer 3\ne\tMap 1\tReducer 3\ne\tMap 2\tReducer 3\n' | sha256sum
    assertEquals(HIVE_SIGNATURE, GrapheneSignature.of(HIVE, HIVE_EDGES));
    assertEquals(HIVE_SIGNATURE,
        GrapheneSignature.sha256("v\tMap 1\nv\tMap 2\nv\tReducer 3\ne\tMap 1\tReducer 3\ne\tMap 2\tReducer 3\n"));
    // From the DAG the AM sees: the same, whatever the DAG's name.
    assertEquals(HIVE_SIGNATURE, GrapheneSignature.of(dag("query_42", HIVE, HIVE_EDGES)));
    assertEquals(HIVE_SIGNATURE, GrapheneSignature.of(dag("query_43", HIVE, HIVE_EDGES)));
    // Another shape: one edge less, or a renamed vertex.
    assertTrue(!HIVE_SIGNATURE.equals(GrapheneSignature.of(HIVE, edges("Map 1", "Reducer 3"))));
    assertTrue(!HIVE_SIGNATURE.equals(
        GrapheneSignature.of(Arrays.asList("Map 1", "Map 2", "Reducer 4"), edges("Map 1", "Reducer 4", "Map 2", "Reducer 4"))));
  }

  @Test
  public void namesAreSortedByUtf8Bytes() throws Exception {
    // U+FFFD sorts after U+10000 in UTF-16 order and before it in UTF-8 byte order.
    String bmp = "\uFFFD";
    String astral = new String(Character.toChars(0x10000));
    String text = "v\t" + bmp + "\nv\t" + astral + "\n";
    assertEquals(GrapheneSignature.sha256(text), GrapheneSignature.of(Arrays.asList(astral, bmp), edges()));
    assertTrue(GrapheneSignature.BYTE_ORDER.compare("Map 10", "Map 2") < 0);
    assertTrue(GrapheneSignature.BYTE_ORDER.compare("Map", "Map 1") < 0);
  }

  @Test
  public void aNameWithATabHasNoSignatureAndTheNameLookupStillWorks() throws Exception {
    List<String> vs = Arrays.asList("a\tb", "c");
    try {
      GrapheneSignature.of(vs, edges());
      fail("a tab in a vertex name");
    } catch (GrapheneSignature.NoSignatureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("a\\tb"));
    }
    File dir = tmp.newFolder();
    write(new File(dir, "tabs.json"), export("tabs", null, "c"));
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    GrapheneDAGScheduler s = scheduler(dag("tabs", vs, edges()));
    assertNull(s.loadError());
    assertNull(s.signature());
    // An export carrying a signature cannot be this DAG's.
    write(new File(dir, "tabs.json"), export("tabs", HIVE_SIGNATURE, "c"));
    try (LogCapture log = LogCapture.start()) {
      s = scheduler(dag("tabs", vs, edges()));
      assertNotNull(s.loadError());
      assertTrue(s.loadError(), s.loadError().contains("holds a tab"));
      assertEquals(1, log.lines().size());
      assertTrue(log.lines().get(0), log.lines().get(0).contains("(signature none)"));
    }
  }

  @Test
  public void theDirectoryIsSearchedBySignatureThenByName() throws Exception {
    File dir = tmp.newFolder();
    // Written for an earlier run of the recurring query: another DAG name, the same shape.
    File bySig = new File(dir, HIVE_SIGNATURE + ".json");
    write(bySig, export("query_41", HIVE_SIGNATURE, "Map 2", "Map 1", "Reducer 3"));
    File byName = new File(dir, "query_42.json");
    write(byName, export("query_42", null, "Map 1", "Map 2", "Reducer 3"));
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    try (LogCapture log = LogCapture.start()) {
      GrapheneDAGScheduler s = scheduler(dag("query_42", HIVE, HIVE_EDGES));
      assertNull(s.loadError());
      assertEquals(bySig, s.exportFile());
      assertEquals(HIVE_SIGNATURE, s.signature());
      assertEquals(1, s.order().vertexRange("Map 2").high);
      assertEquals(Arrays.asList("INFO " + GrapheneDAGScheduler.IN_USE + " for DAG 'query_42': export "
          + bySig + ", signature " + HIVE_SIGNATURE), log.lines());
    }
    // Without the signature's file: the DAG's name.
    assertTrue(bySig.delete());
    GrapheneDAGScheduler s = scheduler(dag("query_42", HIVE, HIVE_EDGES));
    assertNull(s.loadError());
    assertEquals(byName, s.exportFile());
    assertEquals(1, s.order().vertexRange("Map 1").high);
    // An export found by signature need not carry the field, nor the DAG's name.
    write(bySig, export("query_1", null, "Reducer 3"));
    s = scheduler(dag("query_43", HIVE, HIVE_EDGES));
    assertNull(s.loadError());
    assertEquals(bySig, s.exportFile());
  }

  @Test
  public void anExportWrittenFromTezHistoryIsFoundBySignature() throws Exception {
    // src/test/resources/etl-from-history.json: written by
    // graphene export --format tez --from-history tests/data/tez/history --out-dir D
    // (the file D/<signature>.json of the etl shape, from the runs etl-q1 and etl-q2).
    File dir = tmp.newFolder();
    File f = new File(dir, HIVE_SIGNATURE + ".json");
    Files.copy(new File(getClass().getResource("/etl-from-history.json").toURI()).toPath(), f.toPath());
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    // A later run of the recurring DAG under yet another name.
    GrapheneDAGScheduler s = scheduler(dag("etl-q3", HIVE, HIVE_EDGES));
    assertNull(s.loadError());
    assertEquals(f, s.exportFile());
    GrapheneOrder o = s.order();
    assertEquals(HIVE_SIGNATURE, o.signature());
    assertEquals("etl-q2", o.dagName());
    // The tasks' ranges as the file gives them: Map 1's two tasks, Map 2's, Reducer 3's three.
    assertEquals(1, o.rangeOf("Map 1", 0).high);
    assertEquals(4, o.rangeOf("Map 1", 1).high);
    assertEquals(7, o.rangeOf("Map 2", 0).high);
    assertEquals(16, o.rangeOf("Reducer 3", 2).high);
    assertEquals(18, o.rangeOf("Reducer 3", 2).low);
    // A task beyond the export's parallelism (this run has more Map 2 tasks): its vertex's range.
    assertEquals(4, o.rangeOf("Map 2", 5).high);
    // The same file is refused by a DAG of another shape, even when named after it.
    File other = tmp.newFolder();
    Files.copy(f.toPath(), new File(other, "etl-q2.json").toPath());
    System.setProperty(GrapheneDAGScheduler.PROPERTY, other.getPath());
    s = scheduler(dag("etl-q2", Arrays.asList("Map 1", "Map 2", "Reducer 3", "Reducer 4"),
        edges("Map 1", "Reducer 3", "Map 2", "Reducer 3", "Reducer 3", "Reducer 4")));
    assertNull(s.order());
    assertTrue(s.loadError(), s.loadError().contains("not of this DAG's shape"));
  }

  @Test
  public void theDagsConfigurationKeyComesFirst() throws Exception {
    File good = tmp.newFolder();
    write(new File(good, HIVE_SIGNATURE + ".json"), export("q", HIVE_SIGNATURE, "Map 1"));
    File empty = tmp.newFolder();
    System.setProperty(GrapheneDAGScheduler.PROPERTY, empty.getPath());
    GrapheneDAGScheduler s = scheduler(dag("q", HIVE, HIVE_EDGES, GrapheneDAGScheduler.PROPERTY, good.getPath()));
    assertNull(s.loadError());
    // The -D property when the configuration lacks the key.
    s = scheduler(dag("q", HIVE, HIVE_EDGES, "some.other.key", good.getPath()));
    assertTrue(s.loadError(), s.loadError().contains("-D" + GrapheneDAGScheduler.PROPERTY));
    assertTrue(s.loadError(), s.loadError().contains("holds neither " + HIVE_SIGNATURE + ".json nor q.json"));
  }

  @Test
  public void anExportOfAnotherShapeIsRefused() throws Exception {
    File dir = tmp.newFolder();
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    String other = GrapheneSignature.of(HIVE, edges("Map 1", "Reducer 3"));
    String[][] cases = {
        // The signature field is another DAG's (under this DAG's name).
        {"q.json", export("q", other, "Map 1", "Map 2", "Reducer 3"), "is the order of the DAG with signature " + other},
        // Under the signature's name, the field disagrees.
        {HIVE_SIGNATURE + ".json", export("q", other, "Map 1"), "not of this DAG's shape"},
        // A vertex the DAG lacks.
        {HIVE_SIGNATURE + ".json", export("q", HIVE_SIGNATURE, "Map 1", "Map 7"), "names vertex 'Map 7', which the DAG lacks"},
        // Found by name, no signature, a task of a vertex the DAG lacks.
        {"q.json", "{\"format\": \"graphene-tez/2\", \"dag\": \"q\", \"vertices\": [], \"tasks\": "
            + "[{\"vertex\": \"Reducer 9\", \"index\": 0, \"low\": 3, \"high\": 1}]}", "names vertex 'Reducer 9'"},
    };
    for (String[] c : cases) {
      for (File f : dir.listFiles()) {
        assertTrue(f.delete());
      }
      write(new File(dir, c[0]), c[1]);
      try (LogCapture log = LogCapture.start()) {
        GrapheneDAGScheduler s = scheduler(dag("q", HIVE, HIVE_EDGES));
        assertNull(s.order());
        assertTrue(s.loadError(), s.loadError().contains(c[2]));
        List<String> lines = log.lines();
        assertEquals(lines.toString(), 1, lines.size());
        assertTrue(lines.get(0), lines.get(0).startsWith("ERROR " + GrapheneDAGScheduler.FALLBACK
            + " for DAG 'q' (signature " + HIVE_SIGNATURE + "): "));
        assertTrue(lines.get(0), lines.get(0).contains(c[2]));
      }
    }
  }

  @Test
  public void missingMalformedAndOversizedExportsAreLoggedOnce() throws Exception {
    File dir = tmp.newFolder();
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    // Nothing in the directory: WARN.
    try (LogCapture log = LogCapture.start()) {
      GrapheneDAGScheduler s = scheduler(dag("q", HIVE, HIVE_EDGES));
      s.order();
      s.loadError();
      assertEquals(Arrays.asList("WARN " + GrapheneDAGScheduler.FALLBACK + " for DAG 'q' (signature "
          + HIVE_SIGNATURE + "): the export directory " + dir + " (from -D" + GrapheneDAGScheduler.PROPERTY
          + ") holds neither " + HIVE_SIGNATURE + ".json nor q.json"), log.lines());
    }
    GrapheneDAGScheduler s0;
    // Malformed: ERROR naming the file.
    File f = new File(dir, HIVE_SIGNATURE + ".json");
    write(f, "{\"format\": \"graphene-tez/2\", \"dag\": ");
    try (LogCapture log = LogCapture.start()) {
      GrapheneDAGScheduler s = scheduler(dag("q", HIVE, HIVE_EDGES));
      assertTrue(s.loadError(), s.loadError().contains(f + ": not JSON"));
      assertEquals(1, log.lines().size());
      assertTrue(log.lines().get(0), log.lines().get(0).startsWith("ERROR " + GrapheneDAGScheduler.FALLBACK));
    }
    // Nested deeper than any export: refused before Jackson's recursive parser sees it.
    StringBuilder deep = new StringBuilder();
    for (int i = 0; i < 100000; i++) {
      deep.append('[');
    }
    write(f, deep.toString());
    s0 = scheduler(dag("q", HIVE, HIVE_EDGES));
    assertTrue(s0.loadError(), s0.loadError().contains(f + ": not JSON: nested more than 32 deep at byte 32"));
    // Brackets inside strings do not count.
    write(f, "{\"format\": \"graphene-tez/2\", \"dag\": \"" + deep.substring(0, 40) + "\\\"[\", \"vertices\": [], \"tasks\": []}");
    s0 = scheduler(dag("q", HIVE, HIVE_EDGES));
    assertNull(s0.loadError());
    // Larger than the configured limit: refused before it is read.
    write(f, export("q", HIVE_SIGNATURE, "Map 1", "Map 2", "Reducer 3"));
    GrapheneDAGScheduler s = scheduler(dag("q", HIVE, HIVE_EDGES, GrapheneDAGScheduler.MAX_BYTES_KEY, "100"));
    assertTrue(s.loadError(), s.loadError().contains("bytes, more than the limit of 100"));
    s = scheduler(dag("q", HIVE, HIVE_EDGES, GrapheneDAGScheduler.MAX_BYTES_KEY, "lots"));
    assertTrue(s.loadError(), s.loadError().contains("'lots' is not a number of bytes"));
    s = scheduler(dag("q", HIVE, HIVE_EDGES, GrapheneDAGScheduler.MAX_BYTES_KEY, "100000"));
    assertNull(s.loadError());
    // A file named directly that does not exist.
    System.setProperty(GrapheneDAGScheduler.PROPERTY, new File(dir, "gone.json").getPath());
    s = scheduler(dag("q", HIVE, HIVE_EDGES));
    assertTrue(s.loadError(), s.loadError().contains("gone.json: no such file"));
  }

  @Test
  public void aDagNameWithAPathNeverLeavesTheDirectory() throws Exception {
    File dir = tmp.newFolder("exports");
    write(new File(tmp.getRoot(), "x.json"), export("../x", null, "Map 1"));
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    GrapheneDAGScheduler s = scheduler(dag("../x", HIVE, HIVE_EDGES));
    assertNull(s.order());
    assertTrue(s.loadError(), s.loadError().contains("nor a file named after the DAG"));
  }
}
