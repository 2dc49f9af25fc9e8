"""Generated from the commands' typer declarations by `python -m agent_tty.cli.parse`: do not edit.

Each command: its arguments (dest, type, many, required, default) in order and its options
(names, dest, type, many, required, default), as agent_tty/cli/fastparse.py reads them.
tests/unit/test_fastparse.py fails when this differs from what the declarations say.
"""

TABLE = {
    'create': (
        (
            ('program', 'str', True, True, None),
        ),
        (
            (('--name',), 'name', 'str', False, False, None),
            (('--cols',), 'cols', 'int', False, False, 80),
            (('--rows',), 'rows', 'int', False, False, 24),
            (('--cwd',), 'cwd', 'str', False, False, None),
            (('--env',), 'env', 'str', True, False, []),
            (('--term',), 'term', 'str', False, False, 'xterm-256color'),
            (('--idle-timeout',), 'idle_timeout', 'str', False, False, None),
        ),
    ),
    'list': (
        (),
        (
            (('--all', '-a'), 'all_', 'bool', False, False, False),
        ),
    ),
    'inspect': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (),
    ),
    'destroy': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--force', '-f'), 'force', 'bool', False, False, False),
        ),
    ),
    'gc': (
        (),
        (
            (('--dry-run',), 'dry_run', 'bool', False, False, False),
            (('--older-than',), 'older_than', 'str', False, False, None),
            (('--stale-only',), 'stale_only', 'bool', False, False, False),
        ),
    ),
    'resize': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--cols',), 'cols', 'int', False, True, None),
            (('--rows',), 'rows', 'int', False, True, None),
        ),
    ),
    'signal': (
        (
            ('session_id', 'str', False, True, None),
            ('signal_name', 'str', False, True, None),
        ),
        (),
    ),
    'run': (
        (
            ('session_id', 'str', False, True, None),
            ('shell_command', 'str', False, False, None),
        ),
        (
            (('--file',), 'file', 'str', False, False, None),
            (('--timeout',), 'timeout', 'str', False, False, None),
            (('--no-wait',), 'no_wait', 'bool', False, False, False),
        ),
    ),
    'type': (
        (
            ('session_id', 'str', False, True, None),
            ('text', 'str', False, True, None),
        ),
        (),
    ),
    'paste': (
        (
            ('session_id', 'str', False, True, None),
            ('text', 'str', False, False, None),
        ),
        (
            (('--file',), 'file', 'str', False, False, None),
        ),
    ),
    'send-keys': (
        (
            ('session_id', 'str', False, True, None),
            ('keys', 'str', True, True, None),
        ),
        (),
    ),
    'wait': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--text',), 'text', 'str', False, False, None),
            (('--regex',), 'regex', 'str', False, False, None),
            (('--screen-stable-ms',), 'screen_stable_ms', 'str', False, False, None),
            (('--idle-ms',), 'idle_ms', 'str', False, False, None),
            (('--exit',), 'exit_', 'bool', False, False, False),
            (('--after-seq',), 'after_seq', 'str', False, False, None),
            (('--timeout',), 'timeout', 'str', False, False, None),
            (('--output',), 'output', 'bool', False, False, False),
        ),
    ),
    'batch': (
        (
            ('session_id', 'str', False, True, None),
            ('steps', 'str', False, False, None),
        ),
        (
            (('--file',), 'file', 'str', False, False, None),
            (('--keep-going',), 'keep_going', 'bool', False, False, False),
        ),
    ),
    'snapshot': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--format',), 'format_', 'str', False, False, 'text'),
            (('--scrollback',), 'scrollback', 'bool', False, False, False),
        ),
    ),
    'screenshot': (
        (
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--out',), 'out', 'str', False, False, None),
        ),
    ),
    'record': (
        (
            ('action', 'str', False, True, None),
            ('session_id', 'str', False, True, None),
        ),
        (
            (('--format',), 'format_', 'str', False, False, 'asciicast'),
            (('--out',), 'out', 'str', False, False, None),
            (('--speed',), 'speed', 'str', False, False, None),
            (('--max-idle',), 'max_idle', 'str', False, False, None),
            (('--fps',), 'fps', 'int', False, False, None),
        ),
    ),
    'mark': (
        (
            ('session_id', 'str', False, True, None),
            ('label', 'str', False, True, None),
        ),
        (),
    ),
    'dashboard': (
        (),
        (
            (('--all', '-a'), 'all_', 'bool', False, False, False),
            (('--select',), 'select', 'str', False, False, None),
            (('--once',), 'once', 'bool', False, False, False),
            (('--cols',), 'cols', 'int', False, False, None),
            (('--rows',), 'rows', 'int', False, False, None),
        ),
    ),
    'mcp': (
        (),
        (
            (('--idle-timeout',), 'idle_timeout', 'str', False, False, None),
        ),
    ),
    'version': (
        (),
        (),
    ),
    'doctor': (
        (),
        (),
    ),
    'platform': (
        (),
        (),
    ),
    'schema': (
        (
            ('name', 'str', False, False, None),
        ),
        (),
    ),
}
