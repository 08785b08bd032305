package org.graphene.tez;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.io.Text;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.Edge;
import org.apache.tez.dag.api.ProcessorDescriptor;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.UserPayload;
import org.apache.tez.dag.api.Vertex;
import org.apache.tez.dag.api.VertexManagerPluginDescriptor;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.apache.tez.dag.library.vertexmanager.ShuffleVertexManager;
import org.apache.tez.runtime.api.ProcessorContext;
import org.apache.tez.runtime.library.conf.UnorderedPartitionedKVEdgeConfig;
import org.apache.tez.runtime.library.partitioner.HashPartitioner;
import org.apache.tez.runtime.library.processor.SimpleProcessor;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A real DAG through a real Tez AM in local mode, with the plugin as its DAG scheduler: two root
 * vertices of three tasks each and a vertex reading both. Local mode runs one task at a time
 * ({@code tez.am.inline.task.execution.max-tasks = 1}), so the tasks pending while one runs
 * start in the order of their container requests' priorities. Each task appends its name to a
 * file as it starts; the first to start holds the slot for 1.5 s, time enough for every root
 * task's request to arrive on a loaded machine.
 *
 * <p>The first root task to ask gets the free slot whatever its priority (it is alone), so the
 * order is checked from the second start on: Tez's natural order runs one root vertex's tasks,
 * then the other's; graphene's export interleaves them, starting with the vertex natural order
 * runs later, and the realized starts follow it task by task. The session's configuration names
 * an empty export directory (the AM level); the second DAG names its own with dag.setConf.
 */
public class GrapheneLocalModeTest {
  @ClassRule public static TemporaryFolder tmp = new TemporaryFolder();

  /** The first task holds the only slot while every root task's request arrives. */
  static final int FIRST_MS = 1500;
  static final int SLEEP_MS = 50;
  static final int TASKS = 3;
  static final List<String> VERTICES = Arrays.asList("left", "right", "join");
  static final List<String[]> EDGES =
      Arrays.asList(new String[] {"left", "join"}, new String[] {"right", "join"});

  private static TezClient client;
  /** The AM-level export directory: empty. */
  private static File amExports;

  /** Appends "vertex[index]" to the file its payload names, then sleeps (longer if first). */
  public static class RecordStart extends SimpleProcessor {
    public RecordStart(ProcessorContext context) {
      super(context);
    }

    @Override
    public void run() throws Exception {
      ByteBuffer b = getContext().getUserPayload().getPayload();
      byte[] path = new byte[b.remaining()];
      b.get(path);
      String line = getContext().getTaskVertexName() + "[" + getContext().getTaskIndex() + "]\n";
      File file = new File(new String(path, StandardCharsets.UTF_8));
      boolean first;
      synchronized (RecordStart.class) {
        first = file.length() == 0;
        Files.write(file.toPath(), line.getBytes(StandardCharsets.UTF_8),
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      }
      Thread.sleep(first ? FIRST_MS : SLEEP_MS);
    }
  }

  @BeforeClass
  public static void startSession() throws Exception {
    TezConfiguration conf = new TezConfiguration();
    conf.setBoolean(TezConfiguration.TEZ_LOCAL_MODE, true);
    conf.setBoolean(TezConfiguration.TEZ_LOCAL_MODE_WITHOUT_NETWORK, true);
    conf.set("fs.defaultFS", "file:///");
    conf.set(TezConfiguration.TEZ_AM_STAGING_DIR, tmp.newFolder("staging").getAbsolutePath());
    conf.setBoolean("tez.runtime.optimize.local.fetch", true);
    // One task at a time: the pending requests queue by priority.
    conf.setInt(TezConfiguration.TEZ_AM_INLINE_TASK_EXECUTION_MAX_TASKS, 1);
    // Ignored in local mode (LocalClient sets its own scheduler at the AM level): the DAGs
    // below set the class with dag.setConf, which is what takes effect.
    conf.set(TezConfiguration.TEZ_AM_DAG_SCHEDULER_CLASS, GrapheneDAGScheduler.class.getName());
    // The AM-level export directory, for every DAG that does not name its own.
    amExports = tmp.newFolder("am-exports");
    conf.set(GrapheneDAGScheduler.PROPERTY, amExports.getPath());
    client = TezClient.create("graphene-local", conf, true);
    client.start();
  }

  @AfterClass
  public static void stopSession() throws Exception {
    if (client != null) {
      client.stop();
    }
  }

  private static DAG dag(String name, File starts, String exports) {
    UserPayload payload =
        UserPayload.create(ByteBuffer.wrap(starts.getAbsolutePath().getBytes(StandardCharsets.UTF_8)));
    ProcessorDescriptor p = ProcessorDescriptor.create(RecordStart.class.getName()).setUserPayload(payload);
    Vertex left = Vertex.create("left", p, TASKS);
    Vertex right = Vertex.create("right", p, TASKS);
    // The join starts when both sources have finished (slow start at 100%).
    Vertex join = Vertex.create("join", p, 1).setVertexManagerPlugin(
        ShuffleVertexManager.createConfigBuilder(null)
            .setSlowStartMinSrcCompletionFraction(1.0f)
            .setSlowStartMaxSrcCompletionFraction(1.0f)
            .build());
    UnorderedPartitionedKVEdgeConfig edge = UnorderedPartitionedKVEdgeConfig
        .newBuilder(Text.class.getName(), Text.class.getName(), HashPartitioner.class.getName()).build();
    DAG dag = DAG.create(name).addVertex(left).addVertex(right).addVertex(join)
        .addEdge(Edge.create(left, join, edge.createDefaultEdgeProperty()))
        .addEdge(Edge.create(right, join, edge.createDefaultEdgeProperty()));
    dag.setConf(TezConfiguration.TEZ_AM_DAG_SCHEDULER_CLASS, GrapheneDAGScheduler.class.getName());
    if (exports != null) {
      dag.setConf(GrapheneDAGScheduler.PROPERTY, exports);
    }
    return dag;
  }

  private static List<String> run(DAG dag, File starts) throws Exception {
    DAGClient c = client.submitDAG(dag);
    DAGStatus status = c.waitForCompletion();
    c.close();
    assertEquals(status.getDiagnostics().toString(), DAGStatus.State.SUCCEEDED, status.getState());
    List<String> lines = Files.readAllLines(starts.toPath(), StandardCharsets.UTF_8);
    assertEquals(lines.toString(), 2 * TASKS + 1, lines.size());
    assertEquals("join[0]", lines.get(lines.size() - 1));
    return lines;
  }

  private static String vertexOf(String task) {
    return task.substring(0, task.indexOf('['));
  }

  /** A graphene-tez/2 export: the k-th task of `order` gets [3k - 2, 3k]; join after them. */
  private static String export(String signature, List<String> order) {
    StringBuilder b = new StringBuilder("{\"format\": \"graphene-tez/2\", \"dag\": \"an earlier run\", "
        + "\"signature\": \"" + signature + "\", \"vertices\": [");
    int k = order.size() + 1;
    b.append("{\"name\": \"join\", \"low\": ").append(3 * k).append(", \"high\": ").append(3 * k - 2)
        .append("}], \"tasks\": [");
    for (int i = 0; i < order.size(); i++) {
      String t = order.get(i);
      int index = Integer.parseInt(t.substring(t.indexOf('[') + 1, t.indexOf(']')));
      b.append(i > 0 ? ", " : "").append("{\"vertex\": \"").append(vertexOf(t)).append("\", \"index\": ")
          .append(index).append(", \"low\": ").append(3 * i + 3).append(", \"high\": ").append(3 * i + 1)
          .append("}");
    }
    return b.append("]}").toString();
  }

  @Test(timeout = 180000)
  public void theAmStartsTasksInTheExportsOrder() throws Exception {
    String signature = GrapheneSignature.of(VERTICES, EDGES);

    // 1. No export for this DAG in the AM-level directory: Tez's natural order, the reason
    // logged once.
    File none = amExports;
    File starts = tmp.newFile("natural.txt");
    List<String> natural;
    List<String> log;
    try (LogCapture capture = LogCapture.start()) {
      natural = run(dag("natural", starts, null), starts);
      log = capture.lines();
    }
    assertEquals(log.toString(), 1, log.size());
    assertEquals("WARN " + GrapheneDAGScheduler.FALLBACK + " for DAG 'natural' (signature " + signature
        + "): the export directory " + none + " (from the DAG's configuration key "
        + GrapheneDAGScheduler.PROPERTY + ") holds neither " + signature + ".json nor natural.json", log.get(0));
    // After the first start, one root vertex's tasks, then the other's.
    List<String> rest = natural.subList(1, 2 * TASKS);
    int changes = 0;
    for (int i = 1; i < rest.size(); i++) {
      changes += vertexOf(rest.get(i)).equals(vertexOf(rest.get(i - 1))) ? 0 : 1;
    }
    assertEquals("natural order groups the root vertices: " + natural, 1, changes);
    String naturalFirst = vertexOf(rest.get(0));
    String naturalLater = naturalFirst.equals("left") ? "right" : "left";

    // 2. graphene's order, from the DAG's own directory (dag.setConf, over the AM's), found by
    // the DAG's signature under another DAG name: the vertex
    // natural order runs later goes first, interleaved with the other, task indexes reversed.
    File exports = tmp.newFolder("exports");
    List<String> order = new ArrayList<>();
    for (int i = TASKS - 1; i >= 0; i--) {
      order.add(naturalLater + "[" + i + "]");
      order.add(naturalFirst + "[" + i + "]");
    }
    File file = new File(exports, signature + ".json");
    Files.write(file.toPath(), export(signature, order).getBytes(StandardCharsets.UTF_8));
    starts = tmp.newFile("graphene.txt");
    List<String> graphene;
    try (LogCapture capture = LogCapture.start()) {
      graphene = run(dag("recurring-2026-11-28", starts, exports.getPath()), starts);
      log = capture.lines();
    }
    assertEquals(Arrays.asList("INFO " + GrapheneDAGScheduler.IN_USE + " for DAG 'recurring-2026-11-28': export "
        + file + ", signature " + signature), log);
    // Whichever task got the free slot first, the others started in the export's order.
    List<String> want = new ArrayList<>(order);
    assertTrue(want.remove(graphene.get(0)));
    assertEquals("graphene's order: " + graphene, want, graphene.subList(1, 2 * TASKS));
  }
}
