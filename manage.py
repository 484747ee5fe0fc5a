#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
    if sys.argv[1:2] == ["parse"]:
        # `parse` reads one file and stores nothing: it needs the parsers and two settings, not
        # the app registry (django.setup() imports every model, ~0.4 s before a byte is read).
        from artifacts.management.commands.parse import Command

        Command().run_from_argv(sys.argv)
        sys.exit(0)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
