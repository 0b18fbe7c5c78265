package io.queen.timers.core.config;

/** A setting is missing or out of range. The message names the setting and what is allowed. */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
