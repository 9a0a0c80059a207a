"""jitscope's own console script is never the user's code (issue 17: profile ranked `jitscope:8 (<module>)`)."""

from __future__ import annotations

import os
import sysconfig

from jitscope.userframes import default_is_user_file


def test_the_interpreters_scripts_folder_is_not_user_code() -> None:
    scripts = sysconfig.get_paths()["scripts"]
    assert not default_is_user_file(os.path.join(scripts, "jitscope"))
    assert not default_is_user_file(os.path.join(scripts, "python"))
