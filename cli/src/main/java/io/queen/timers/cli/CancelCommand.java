package io.queen.timers.cli;

import io.queen.timers.client.command.TimerCommand;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Produces one cancel command. */
@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = {"Publish one cancel command.",
            "The verdict is cancelled, too_late (being fired right now) or absent (no longer pending:",
            "it may already have been delivered; `queen-timers find` asks the log)."},
        footer = {"", "Example:", "  queen-timers cancel -q orders.reminders -k order-42"})
final class CancelCommand implements Callable<Integer> {

    @ParentCommand QueenTimers root;
    @Spec CommandSpec spec;
    @Mixin CommandTarget target;
    @Mixin KafkaOptions kafka;
    @Mixin Output output;

    @Override
    public Integer call() {
        return ScheduleCommand.Sent.print(root, spec, output, kafka, target,
                TimerCommand.cancel(target.queue, target.timerKey), "");
    }
}
