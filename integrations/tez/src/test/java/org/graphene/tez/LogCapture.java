package org.graphene.tez;

import java.util.ArrayList;
import java.util.List;

import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/**
 * The lines GrapheneDAGScheduler logs, captured from its log4j logger (slf4j's binding on Tez's
 * and Hadoop's classpath is reload4j), from {@link #start()} to {@link #close()}.
 */
final class LogCapture extends AppenderSkeleton implements AutoCloseable {
  private final List<String> lines = new ArrayList<>();
  private final Logger logger = Logger.getLogger(GrapheneDAGScheduler.class);
  private Level before;

  static LogCapture start() {
    LogCapture c = new LogCapture();
    c.before = c.logger.getLevel();
    c.logger.setLevel(Level.INFO);
    c.logger.addAppender(c);
    return c;
  }

  @Override
  protected synchronized void append(LoggingEvent e) {
    lines.add(e.getLevel() + " " + e.getRenderedMessage());
  }

  /** Every line so far, each "LEVEL message". */
  synchronized List<String> lines() {
    return new ArrayList<>(lines);
  }

  @Override
  public void close() {
    logger.removeAppender(this);
    logger.setLevel(before);
  }

  @Override
  public boolean requiresLayout() {
    return false;
  }
}
