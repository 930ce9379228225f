#!/usr/bin/python3
"""Makes the payroll-shaped rosters of this folder and their expected
profiles, once (the files are committed; run again only to change them):

  sage-vip-equity.csv         Sage VIP's equity history CSV: report title
                              lines, then a header; written by LibreOffice
                              (soffice --convert-to csv) from a workbook
                              openpyxl made
  simplepay-skills-equity.xlsx  SimplePay's "Skills & Equity" bulk grid saved
                              from Excel: written by openpyxl
  payspace-eea2-details.xlsx  PaySpace's "EEA2 Details" report: title rows,
                              Paterson grades; made by openpyxl, saved again
                              by LibreOffice (soffice --convert-to xlsx)

Each *.expected.json is the profile counted here, independently of eepipe,
by the rules of docs/profile-and-propose.md: every counter of both targets,
and the rows not counted (file, row).

Run: /usr/bin/python3 make_rosters.py (needs python3-openpyxl and soffice).
"""
import csv, json, os, random, shutil, subprocess, tempfile
import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
RACES = ["african", "coloured", "indian", "white", "foreign"]
GENDERS = ["male", "female"]
LEVELS = ["top_managers", "senior_managers", "middle_managers", "junior_managers",
          "semi_skilled_employees", "unskilled_employees",
          "total_permanent_employees", "temporary_employees", "grand_total_employees"]
PATERSON = {"A": "unskilled_employees", "B": "semi_skilled_employees", "C": "junior_managers",
            "D": "middle_managers", "E": "senior_managers", "F": "top_managers", "G": "top_managers"}


def empty():
    return {t: {f"number_of_{r}_{g}_{l}": 0 for r in RACES for g in GENDERS for l in LEVELS}
            for t in ("all_employees", "disabled_employees")}


class Expect:
    def __init__(self, name):
        self.name, self.targets, self.bad, self.seen, self.rows = name, empty(), [], set(), 0

    def add(self, row, emp_no, race, gender, level, disabled, foreign, temporary, bad=False):
        self.rows += 1
        if emp_no in self.seen or bad:
            self.bad.append(row)
            return
        self.seen.add(emp_no)
        r = "foreign" if foreign else race
        levels = ["temporary_employees"] if temporary else [level, "total_permanent_employees"]
        levels.append("grand_total_employees")
        for t in ["all_employees"] + (["disabled_employees"] if disabled else []):
            for l in levels:
                self.targets[t][f"number_of_{r}_{gender}_{l}"] += 1

    def write(self):
        out = {"employees": self.rows, "classified": self.rows - len(self.bad),
               "unclassified_rows": self.bad, "targets": self.targets}
        with open(os.path.join(HERE, self.name + ".expected.json"), "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)


def people(rng, n):
    """n employees: (race, gender, level, grade, disabled, foreign, temporary)."""
    out = []
    for i in range(n):
        level = rng.choices(LEVELS[:6], [1, 3, 8, 20, 40, 28])[0]
        band = {v: k for k, v in PATERSON.items() if k != "G"}[level]
        out.append(dict(race=rng.choices(RACES[:4], [6, 1, 1, 2])[0], gender=rng.choice(GENDERS),
                        level=level, band=band, disabled=rng.random() < 0.03,
                        foreign=rng.random() < 0.05, temporary=rng.random() < 0.1))
    return out


def soffice(src, fmt, outdir):
    subprocess.run(["soffice", "--headless", "--convert-to", fmt, "--outdir", outdir, src],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sage(rng):
    """Sage VIP: codes A/C/I/W, M/F, Y/N, the EEA level words, grades C1-style."""
    exp = Expect("sage-vip-equity")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Equity History Report"])
    ws.append(["Company: Acme Distribution (Pty) Ltd", "", "Run date: 2026-10-01"])
    ws.append(["Employee Code", "Surname", "First Name", "Race", "Gender", "Disabled", "Foreign National",
               "Occupational Level", "Job Grade", "Employment Type"])
    code = {"african": "A", "coloured": "C", "indian": "I", "white": "W"}
    words = {"top_managers": "Top Management", "senior_managers": "Senior Management",
             "middle_managers": "Professionally qualified and experienced specialists and mid-management",
             "junior_managers": "Skilled technical and academically qualified workers, junior management, supervisors, foremen, and superintendents",
             "semi_skilled_employees": "Semi-skilled and discretionary decision making",
             "unskilled_employees": "Unskilled and defined decision making"}
    row = 3
    for i, p in enumerate(people(rng, 400)):
        row += 1
        grade = p["band"] + str(rng.randint(1, 3))
        ws.append([f"AC{i:04d}", f"Surname{i}", f"Name{i}", code[p["race"]], p["gender"][0].upper(),
                   "Y" if p["disabled"] else "N", "Y" if p["foreign"] else "N", words[p["level"]], grade,
                   "Contract" if p["temporary"] else "Permanent"])
        exp.add(row, f"AC{i:04d}", p["race"], p["gender"], p["level"], p["disabled"], p["foreign"], p["temporary"])
    for bad in (["AC9001", "X", "Y", "Purple", "M", "N", "N", "Top Management", "F1", "Permanent"],  # unknown race
                ["AC9002", "X", "Y", "A", "", "N", "N", "Top Management", "F1", "Permanent"],  # no gender
                ["AC9003", "X", "Y", "A", "M", "N", "N", "Top Management", "C2", "Permanent"],  # level and grade disagree
                ["AC0001", "X", "Y", "A", "M", "N", "N", "Top Management", "F1", "Permanent"]):  # duplicate
        row += 1
        ws.append(bad)
        exp.add(row, bad[0], "african", "male", "top_managers", False, False, False, bad=True)
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "sage-vip-equity.xlsx")
    wb.save(src)
    soffice(src, "csv", tmp)
    shutil.copy(os.path.join(tmp, "sage-vip-equity.csv"), HERE)
    exp.file = "sage-vip-equity.csv"
    exp.write()


def simplepay(rng):
    """SimplePay: full words, Yes/No, nationality, the EEA level, no grade."""
    exp = Expect("simplepay-skills-equity")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Skills & Equity"
    ws.append(["Employee Number", "First Name", "Last Name", "Race", "Gender", "Disabled", "Nationality",
               "Occupational Level", "Employment Type"])
    label = {"african": "African", "coloured": "Coloured", "indian": "Indian", "white": "White"}
    words = {"top_managers": "Top management", "senior_managers": "Senior management",
             "middle_managers": "Professionally qualified and experienced specialists and mid-management",
             "junior_managers": "Skilled technical and academically qualified workers, junior management, supervisors, foremen and superintendents",
             "semi_skilled_employees": "Semi-skilled and discretionary decision making",
             "unskilled_employees": "Unskilled and defined decision making"}
    row = 1
    for i, p in enumerate(people(rng, 300)):
        row += 1
        ws.append([1000 + i, f"Name{i}", f"Surname{i}", label[p["race"]], p["gender"].capitalize(),
                   "Yes" if p["disabled"] else "No", "Zimbabwean" if p["foreign"] else "South African",
                   words[p["level"]], "Fixed Term" if p["temporary"] else "Permanent"])
        exp.add(row, str(1000 + i), p["race"], p["gender"], p["level"], p["disabled"], p["foreign"], p["temporary"])
    row += 1
    ws.append([])  # a blank row is skipped
    for bad in ([1900, "X", "Y", "African", "Male", "Maybe", "South African", "Top management", "Permanent"],
                [1901, "X", "Y", "African", "Male", "No", "South African", "Chief", "Permanent"]):
        row += 1
        ws.append(bad)
        exp.add(row, str(bad[0]), "african", "male", "top_managers", False, False, False, bad=True)
    wb.save(os.path.join(HERE, "simplepay-skills-equity.xlsx"))
    exp.write()


def payspace(rng):
    """PaySpace: title rows, Population Group, Paterson modern grades only."""
    exp = Expect("payspace-eea2-details")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "EEA2 Details"
    ws.append(["EEA2 Details"])
    ws.append(["Acme Distribution (Pty) Ltd"])
    ws.append([])
    ws.append(["Employee Code", "Employee Name", "Population Group", "Gender", "Paterson Grade", "Disability",
               "Citizenship", "Employment Type"])
    label = {"african": "Black African", "coloured": "Coloured", "indian": "Indian/Asian", "white": "White"}
    row = 4
    for i, p in enumerate(people(rng, 300)):
        row += 1
        band = p["band"]
        grade = band if band == "A" else band + " " + rng.choice(["Lower", "Upper"])
        if band == "F" and rng.random() < 0.3:
            grade = "F+"
        ws.append([f"PS-{i}", f"Employee {i}", label[p["race"]], p["gender"].capitalize(), grade,
                   "Disabled" if p["disabled"] else "", "Mozambique" if p["foreign"] else "RSA",
                   rng.choice(["Temporary", "Casual"]) if p["temporary"] else "Permanent"])
        exp.add(row, f"PS-{i}", p["race"], p["gender"], p["level"], p["disabled"], p["foreign"], p["temporary"])
    for bad in (["PS-900", "X", "Black African", "Female", "Z9", "", "RSA", "Permanent"],
                ["PS-901", "X", "Black African", "Female", "", "", "RSA", "Permanent"]):
        row += 1
        ws.append(bad)
        exp.add(row, bad[0], "african", "female", "top_managers", False, False, False, bad=True)
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "payspace-eea2-details.xlsx")
    wb.save(src)
    out = os.path.join(tmp, "lo")
    os.makedirs(out)
    soffice(src, "xlsx", out)
    shutil.copy(os.path.join(out, "payspace-eea2-details.xlsx"), HERE)
    exp.write()


if __name__ == "__main__":
    rng = random.Random(29)
    sage(rng)
    simplepay(rng)
    payspace(rng)
