#!/bin/sh
# Final assembly of the spider2v profile, after data's, inside the guest root filesystem: the public
# data-science suite's layout (its spider2v_snapshot.sh) on what the image has. The environments
# /home/user/anaconda3/envs/{jupyter,dbt,dagster} were installed from the locked wheels with the
# package layer; this makes /home/user/anaconda3 the base environment around them.
set -eu
CONDA=/home/user/anaconda3

chmod 0755 /usr/local/bin/google-chrome /usr/local/bin/code /usr/local/bin/gnome-terminal \
  /usr/local/bin/chromium-browser "$CONDA/bin/conda"
# `google-chrome` runs as a process named chrome (see office/assemble.sh)
ln -f /usr/lib/chromium/chromium /usr/lib/chromium/chrome

# The base environment: a venv at the Anaconda root (its python, pip and bin/activate), conda beside them.
python3 -m venv "$CONDA"
mkdir -p "$CONDA/envs" "$CONDA/pkgs"

# Interactive shells know `conda`, as after the suite's `conda init`.
grep -q 'anaconda3/etc/profile.d/conda.sh' /home/user/.bashrc ||
  printf '\n# conda (desktop-env: venv-based, see conda --help)\n. %s/etc/profile.d/conda.sh\n' "$CONDA" >> /home/user/.bashrc

# The suite's folders and JupyterLab's browser setting (its script writes it after `jupyter lab --generate-config`).
mkdir -p /home/user/projects /home/user/.jupyter
for f in jupyter_notebook_config.py jupyter_lab_config.py; do
  echo "c.ServerApp.browser = '/usr/local/bin/chromium-browser'" > "/home/user/.jupyter/$f"
done

# The editor's machine defaults, as in the office image.
mkdir -p /home/user/.config/Code/Machine
cp /etc/skel/.config/Code/Machine/settings.json /home/user/.config/Code/Machine/settings.json

chown -R user:user /home/user
rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /tmp/* 2>/dev/null || true
