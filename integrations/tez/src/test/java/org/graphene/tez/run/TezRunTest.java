package org.graphene.tez.run;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class TezRunTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File write(String name, String text) throws IOException {
    File f = tmp.newFile(name);
    Files.write(f.toPath(), text.getBytes(StandardCharsets.UTF_8));
    return f;
  }

  private void refused(String text, String want) throws IOException {
    File f = write("bad" + System.nanoTime() + ".json", text);
    try {
      RunDag.read(f);
      fail("accepted: " + text);
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(f.getName()));
      assertTrue(e.getMessage(), e.getMessage().contains(want));
    }
  }

  @Test
  public void readsStagesTasksAndEdges() throws IOException {
    RunDag d = RunDag.read(new File("src/test/resources/run-small.json"));
    assertEquals("small", d.name);
    assertEquals(9, d.taskCount());
    RunDag.Stage r4 = d.stages.get("Reducer 4");
    assertEquals(1, r4.parents.size());
    assertTrue(r4.parents.get(0).oneToOne);
    assertEquals(0.5, r4.durations[1], 0.0);
    File f = write("list.json", "{\"stages\": [{\"id\": \"a\", \"duration\": 2, \"demands\": {\"mem\": 1},"
        + " \"tasks\": [{\"duration\": 1, \"demands\": {\"mem\": 3, \"cpu\": 1.5}}, {}]}]}");
    RunDag l = RunDag.read(f);
    assertEquals("list", l.name);
    RunDag.Stage a = l.stages.get("a");
    assertEquals(1.0, a.durations[0], 0.0);
    assertEquals(2.0, a.durations[1], 0.0);
    assertEquals(3.0, a.demand("mem"), 0.0);
    TezRun.Options o = new TezRun.Options();
    // The largest task's container: 3 x 1024 MB, 1.5 vcores rounded up.
    assertEquals(3072, TezRun.resourceOf(o, a).getMemorySize());
    assertEquals(2, TezRun.resourceOf(o, a).getVirtualCores());
  }

  @Test
  public void refusesBadDags() throws IOException {
    refused("[1]", "expected a JSON object");
    refused("{\"stages\": []}", "\"stages\"");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 0, \"duration\": 1}]}", "stages[0].tasks");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1}]}", "stages[0].duration");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1, \"duration\": -1}]}", "stages[0].duration");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1, \"duration\": 1, \"parents\": [\"b\"]}]}",
        "parent 'b' is not a stage");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 2, \"duration\": 1},"
        + " {\"id\": \"b\", \"tasks\": 3, \"duration\": 1, \"parents\": [{\"stage\": \"a\", \"kind\": \"one-to-one\"}]}]}",
        "needs equal task counts");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1, \"duration\": 1, \"parents\": [\"b\"]},"
        + " {\"id\": \"b\", \"tasks\": 1, \"duration\": 1, \"parents\": [\"a\"]}]}", "cycle");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1, \"duration\": 1}, {\"id\": \"a\", \"tasks\": 1, \"duration\": 1}]}",
        "appears twice");
    refused("{\"stages\": [{\"id\": \"a\", \"tasks\": 1, \"duration\": 1, \"parents\": [{\"stage\": \"a\", \"kind\": \"x\"}]}]}",
        "kind");
    refused("not json", "not a JSON DAG");
  }

  @Test
  public void refusesBadOptions() {
    String[][] bad = {
        {"--dag", "x.json"},
        {"--dag", "x.json", "--out", "o", "--order", "fifo"},
        {"--dag", "x.json", "--out", "o", "--order", "graphene"},
        {"--dag", "x.json", "--out", "o", "--runs", "0"},
        {"--dag", "x.json", "--out", "o", "--time-scale", "-1"},
        {"--dag", "x.json", "--out", "o", "--mode", "cloud"},
    };
    for (String[] args : bad) {
      try {
        TezRun.parse(args);
        fail("accepted " + String.join(" ", args));
      } catch (TezRun.UsageError e) {
        // expected
      }
    }
  }

  /** A task that fits no node is refused before the cluster starts, naming its vertex and size. */
  @Test
  public void refusesTasksNoNodeCanHold() throws Exception {
    File dag = write("big.json", "{\"stages\": [{\"id\": \"Map 1\", \"tasks\": 2, \"duration\": 1,"
        + " \"demands\": {\"mem\": 26, \"cpu\": 1}}, {\"id\": \"Reducer 2\", \"tasks\": 1, \"duration\": 1,"
        + " \"demands\": {\"mem\": 1}, \"parents\": [\"Map 1\"]}]}");
    RunDag d = RunDag.read(dag);
    String[] base = {"--dag", dag.getPath(), "--out", tmp.newFolder().getPath(), "--order", "natural",
        "--mode", "yarn"};
    // 26 x 1024 = 26624 MB: more than a 16 GB node.
    try {
      TezRun.checkFits(TezRun.parse(concat(base, "--nodes", "3", "--node-memory-mb", "16384")), d);
      fail("accepted 26624 MB on 16384 MB nodes");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("vertex 'Map 1' asks for containers of 26624 MB"));
      assertTrue(e.getMessage(), e.getMessage().contains("26 mem x 1024 MB"));
      assertTrue(e.getMessage(), e.getMessage().contains("a node holds 16384 MB"));
    }
    // Exactly a node: fits when there are other nodes, but not beside the AM on a single node.
    TezRun.checkFits(TezRun.parse(concat(base, "--nodes", "2", "--node-memory-mb", "26624")), d);
    try {
      TezRun.checkFits(TezRun.parse(concat(base, "--nodes", "1", "--node-memory-mb", "26624")), d);
      fail("accepted 26624 MB beside the AM on one node of 26624 MB");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("512 MB and 1 vcore of them the Tez AM's"));
    }
    // Rounded up to the ResourceManager's 128 MB: 26 x 1000 = 26000 MB becomes 26112 MB.
    try {
      TezRun.checkFits(TezRun.parse(concat(base, "--mem-mb", "1000", "--node-memory-mb", "26600")), d);
      fail("accepted 26112 MB beside the AM on one node of 26600 MB");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("containers of 26112 MB"));
    }
    // Vcores count too (the cluster uses the DominantResourceCalculator): the AM's vcore leaves
    // none on a single node of one vcore.
    try {
      TezRun.checkFits(TezRun.parse(concat(base, "--node-vcores", "1", "--node-memory-mb", "65536")), d);
      fail("accepted a single node of one vcore");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("cannot hold the Tez AM"));
    }
    // Scaled down (--mem-mb 256: 6656 MB), the same DAG fits one node of 8 GB.
    TezRun.checkFits(TezRun.parse(concat(base, "--mem-mb", "256", "--node-memory-mb", "8192")), d);
    // And run() refuses it the same way, before any cluster starts.
    try {
      TezRun.run(TezRun.parse(concat(base, "--node-memory-mb", "8192")));
      fail("ran a DAG no node can hold");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("vertex 'Map 1'"));
    }
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** A real Tez DAG in local mode, both orders: the plugin is the scheduler in graphene's run. */
  @Test
  public void runsBothOrdersInLocalMode() throws Exception {
    File out = tmp.newFolder("out");
    TezRun.Options o = TezRun.parse(new String[] {"--dag", "src/test/resources/run-small.json", "--out",
        out.getPath(), "--order", "graphene,natural", "--export", "src/test/resources/run-small-export",
        "--time-scale", "0.05", "--history-dir", new File(out, "history").getPath()});
    assertEquals(0, TezRun.run(o));
    List<String> runs = Files.readAllLines(new File(out, "runs.csv").toPath());
    assertEquals("order,run,seconds,status", runs.get(0));
    assertEquals(3, runs.size());
    assertTrue(runs.get(1), runs.get(1).startsWith("graphene,1,") && runs.get(1).endsWith(",SUCCEEDED"));
    assertTrue(runs.get(2), runs.get(2).startsWith("natural,1,") && runs.get(2).endsWith(",SUCCEEDED"));
    List<String> tasks = Files.readAllLines(new File(out, "tasks.csv").toPath());
    assertEquals("order,run,vertex,task,container,node,start,end", tasks.get(0));
    assertEquals(1 + 2 * 9, tasks.size());
    double lastMapEnd = 0;
    double firstReducerStart = Double.MAX_VALUE;
    for (String t : tasks.subList(1, tasks.size())) {
      String[] f = t.split(",");
      double start = Double.parseDouble(f[6]);
      double end = Double.parseDouble(f[7]);
      assertTrue(t, end >= start);
      if (f[0].equals("graphene")) {
        if (f[2].startsWith("Map")) {
          lastMapEnd = Math.max(lastMapEnd, end);
        } else if (f[2].equals("Reducer 3")) {
          firstReducerStart = Math.min(firstReducerStart, start);
        }
      }
    }
    assertTrue("Reducer 3 waits for every map", firstReducerStart >= lastMapEnd);
    String g = new String(Files.readAllBytes(new File(out, "logs/graphene-1.am.log").toPath()), StandardCharsets.UTF_8);
    assertTrue(g, g.contains("Using DAG Scheduler: org.graphene.tez.GrapheneDAGScheduler"));
    String n = new String(Files.readAllBytes(new File(out, "logs/natural-1.am.log").toPath()), StandardCharsets.UTF_8);
    assertTrue(n, n.contains("Using DAG Scheduler: org.apache.tez.dag.app.dag.impl.DAGSchedulerNaturalOrder"));
    File[] history = new File(out, "history").listFiles((d, name) -> name.startsWith("history.txt"));
    assertEquals(2, history.length);
  }

  /**
   * A vertex with many ordered (scatter-gather) inputs and an ordered output, as WfCommons
   * workflows have: Tez scales every input's and output's buffer to the task's heap, and with
   * the default input share the output's sort buffer came out at 0 MB and the task failed.
   */
  @Test
  public void runsAVertexWithManyInputsAndAnOutput() throws Exception {
    StringBuilder dag = new StringBuilder("{\"name\": \"fan-in\", \"stages\": [");
    StringBuilder parents = new StringBuilder();
    for (int i = 1; i <= 8; i++) {
      dag.append("{\"id\": \"Map ").append(i).append("\", \"tasks\": 1, \"duration\": 0.1},");
      parents.append(i == 1 ? "" : ", ").append("\"Map ").append(i).append('"');
    }
    dag.append("{\"id\": \"Join\", \"tasks\": 1, \"duration\": 0.1, \"parents\": [").append(parents)
        .append("]}, {\"id\": \"Sink\", \"tasks\": 1, \"duration\": 0.1, \"parents\": [\"Join\"]}]}");
    File f = write("fan-in.json", dag.toString());
    File out = tmp.newFolder("fan-in-out");
    TezRun.Options o = TezRun.parse(new String[] {"--dag", f.getPath(), "--out", out.getPath(), "--order", "natural"});
    assertEquals(0, TezRun.run(o));
    List<String> runs = Files.readAllLines(new File(out, "runs.csv").toPath());
    assertTrue(runs.get(1), runs.get(1).endsWith(",SUCCEEDED"));
    assertEquals(1 + 10, Files.readAllLines(new File(out, "tasks.csv").toPath()).size());
  }
}
