; Inno Setup script: a Windows installer from the one-folder bundle.
;
;   python installers\build_bundle.py                  (on Windows: dist\babelfind\)
;   iscc installers\windows\babelfind.iss              (-> dist\Babelfind-0.1.0-setup.exe)
;
; Installs per user by default (no administrator rights; "for all users" is offered),
; adds Start menu entries for the window, an optional desktop icon, and an optional
; PATH entry so `babelfind` works in a terminal. Uninstalling leaves the user's library
; and models (%LOCALAPPDATA%\babelfind) in place.

#define AppName "Babelfind"
#define AppVersion "0.1.0"
#define BundleDir "..\..\dist\babelfind"

[Setup]
AppId={{6B1C9E4A-3C0F-4E0B-9A7D-2B5F0C8E1D42}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Babelfind
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=Babelfind-{#AppVersion}-setup
SetupIconFile=babelfind.ico
UninstallDisplayIcon={app}\babelfind-gui.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the babelfind command to PATH"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\babelfind-gui.exe"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\babelfind-gui.exe"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; \
    Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\babelfind-gui.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
