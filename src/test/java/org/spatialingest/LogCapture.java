package org.spatialingest;

import java.io.StringWriter;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.WriterAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

/** Every log event at INFO and above, from every logger, while it is open. */
public final class LogCapture implements AutoCloseable {
  private final LoggerContext context;
  private final WriterAppender appender;
  private final Level rootLevel;

  private LogCapture(LoggerContext context, WriterAppender appender, Level rootLevel) {
    this.context = context;
    this.appender = appender;
    this.rootLevel = rootLevel;
  }

  public static LogCapture start(StringWriter target) {
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    WriterAppender appender =
        WriterAppender.newBuilder()
            .setName("log-capture")
            .setTarget(target)
            .setLayout(PatternLayout.newBuilder().withPattern("%p %c %m %ex%n").build())
            .build();
    appender.start();
    LoggerConfig root = context.getConfiguration().getRootLogger();
    Level before = root.getLevel();
    root.setLevel(Level.INFO);
    root.addAppender(appender, Level.INFO, null);
    for (LoggerConfig logger : context.getConfiguration().getLoggers().values()) {
      if (logger != root && !logger.isAdditive()) {
        logger.addAppender(appender, Level.INFO, null); // an additive one passes its events up
      }
    }
    context.updateLoggers();
    return new LogCapture(context, appender, before);
  }

  @Override
  public void close() {
    for (LoggerConfig logger : context.getConfiguration().getLoggers().values()) {
      logger.removeAppender(appender.getName());
    }
    context.getConfiguration().getRootLogger().removeAppender(appender.getName());
    context.getConfiguration().getRootLogger().setLevel(rootLevel);
    context.updateLoggers();
    appender.stop();
  }
}
